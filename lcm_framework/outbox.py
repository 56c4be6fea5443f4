"""The local hook outbox: a private SQLite queue of agent hook events.

Hooks capture an event here when the daemon or the storage backend cannot
take it (and every passive event, such as PostToolUse); the daemon drains it
when it is back. It holds hook payloads only (event name, session id, paths,
capped tool facts), never transcript content, and is not a cache of project
memory. Events carry a transport UUID, the durable machine id and an
installation-wide sequence reserved in the same transaction as the insert
(gap-safe). Local processing is at-least-once; consumers are idempotent.

Each event has two independent states. ``processed_at`` records local
promotion (the daemon's consumer). ``delivery`` records remote delivery to a
shared backend's inbox (``lcm_framework.sync``): pending, claimed, retry ->
delivered -> acknowledged or quarantined -> remote_pruned, or local_only when
the backend has no inbox. A row is deleted only when processed and either
remote_pruned or local_only, so local retention never discards an outage backlog.

This module is self-contained on purpose: it is one of the three places
allowed to use ``sqlite3`` directly, and it never hands its handle out.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import LcmError
from .sqlite_files import open_private

SCHEMA_VERSION = 2
TRANSPORT_VERSION = 1
MAX_PAYLOAD_BYTES = 64 * 1024
MAX_BACKOFF_S = 300.0
MAX_DELIVERY_BACKOFF_S = 60.0

PENDING, CLAIMED, RETRY, DELIVERED = "pending", "claimed", "retry", "delivered"
ACKNOWLEDGED, QUARANTINED, REMOTE_PRUNED, LOCAL_ONLY = "acknowledged", "quarantined", "remote_pruned", "local_only"
UNDELIVERED = (PENDING, CLAIMED, RETRY)
REMOVABLE = (REMOTE_PRUNED, LOCAL_ONLY)
_UNUSABLE = re.compile("[\x00\ud800-\udfff]")

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE events (
            uuid TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            machine_id TEXT NOT NULL,
            seq INTEGER NOT NULL UNIQUE,
            event TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL NOT NULL,
            processed_at REAL,
            last_error TEXT
        )""",
        "CREATE INDEX events_ready ON events (processed_at, next_attempt_at, seq)",
    ),
    2: (  # remote delivery: every existing row, processed or not, still has to be delivered
        "ALTER TABLE events ADD COLUMN delivery TEXT NOT NULL DEFAULT 'pending'",
        "ALTER TABLE events ADD COLUMN delivery_attempts INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE events ADD COLUMN delivery_next_at REAL NOT NULL DEFAULT 0",
        "ALTER TABLE events ADD COLUMN delivery_claim TEXT",
        "ALTER TABLE events ADD COLUMN delivery_error TEXT",
        "ALTER TABLE events ADD COLUMN transport TEXT",
        "ALTER TABLE events ADD COLUMN digest TEXT",
        "ALTER TABLE events ADD COLUMN delivered_at REAL",
        "ALTER TABLE events ADD COLUMN acknowledged_at REAL",
        "ALTER TABLE events ADD COLUMN remote_pruned_at REAL",
        "CREATE INDEX events_delivery ON events (delivery, seq)",
    ),
}


class OutboxError(LcmError):
    """The outbox file could not be opened or written (never carries SQL or paths of other users)."""


@dataclass(frozen=True, slots=True)
class OutboxEvent:
    uuid: str
    version: int
    machine_id: str
    seq: int
    event: str
    payload: dict[str, Any]
    created_at: float
    attempts: int
    next_attempt_at: float
    processed_at: float | None
    last_error: str | None
    delivery: str = PENDING
    delivery_attempts: int = 0
    delivery_error: str | None = None
    transport: str | None = None
    digest: str | None = None
    delivered_at: float | None = None


@dataclass(frozen=True, slots=True)
class Backlog:
    """Unprocessed events: ``pending`` in total, ``failing`` of them already retried at least once; and
    every row by delivery state, the oldest undelivered one's capture time and the newest delivery error."""

    pending: int
    failing: int
    processed: int
    oldest_created_at: float | None
    last_error: str | None
    delivery: dict[str, int] = field(default_factory=dict)
    oldest_undelivered_at: float | None = None
    delivery_error: str | None = None


def outbox_path(home: Path) -> Path:
    return home / "outbox.db"


class Outbox:
    """One connection to ``$LCM_HOME/outbox.db``; open per use and close (cheap), or keep in the daemon."""

    def __init__(self, path: Path, *, timeout_s: float = 2.0) -> None:
        self.path = path
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._db = open_private(path, timeout_s)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise OutboxError(f"the hook outbox cannot be opened: {type(exc).__name__}") from None

    # --- lifecycle ----------------------------------------------------------

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _immediate(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _migrate(self) -> None:
        with self._immediate() as db:
            current = db.execute("PRAGMA user_version").fetchone()[0]
            if current > SCHEMA_VERSION:
                raise OutboxError(f"the hook outbox has schema {current}, newer than this LCM ({SCHEMA_VERSION})")
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[version]:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {version}")
            if db.execute("SELECT 1 FROM meta WHERE key = 'machine_id'").fetchone() is None:
                db.execute("INSERT INTO meta VALUES ('machine_id', ?)", (_uuid4(),))
                db.execute("INSERT INTO meta VALUES ('next_seq', '1')")

    # --- writes -------------------------------------------------------------

    @property
    def machine_id(self) -> str:
        return str(self._db.execute("SELECT value FROM meta WHERE key = 'machine_id'").fetchone()[0])

    def capture(self, event: str, payload: Mapping[str, Any], *, now: float | None = None) -> OutboxEvent:
        """Store one event; its sequence number is reserved in the same transaction (gap-safe)."""
        if _unusable(event) or _unusable(payload):
            raise OutboxError("hook payload contains U+0000 or a lone surrogate")
        body = json.dumps(dict(payload), ensure_ascii=False, sort_keys=True)
        if len(body.encode("utf-8")) > MAX_PAYLOAD_BYTES:
            raise OutboxError(f"hook payload larger than {MAX_PAYLOAD_BYTES} bytes refused")
        stamp = time.time() if now is None else now
        try:
            with self._immediate() as db:
                seq = int(db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()[0])
                db.execute("UPDATE meta SET value = ? WHERE key = 'next_seq'", (str(seq + 1),))
                row = (_uuid4(), TRANSPORT_VERSION, self.machine_id, seq, event, body, stamp, stamp)
                db.execute(
                    "INSERT INTO events (uuid, version, machine_id, seq, event, payload, created_at,"
                    " next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
        except sqlite3.Error as exc:
            raise OutboxError(f"the hook outbox refused the event: {type(exc).__name__}") from None
        return OutboxEvent(row[0], TRANSPORT_VERSION, row[2], seq, event, dict(payload), stamp, 0, stamp, None, None)

    def mark_processed(self, event_uuid: str, *, error_code: str | None = None, local_only: bool = False,
                       now: float | None = None) -> None:
        """Done with this event locally; ``error_code`` records why when it was given up as permanently
        invalid. ``local_only``: the backend has no inbox, so an undelivered event is never delivered."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            db.execute(
                "UPDATE events SET processed_at = ?, last_error = ? WHERE uuid = ? AND processed_at IS NULL",
                (stamp, error_code[:200] if error_code else None, event_uuid),
            )
            if local_only:
                db.execute(f"UPDATE events SET delivery = ? WHERE uuid = ? AND delivery IN {_IN_UNDELIVERED}",
                           (LOCAL_ONLY, event_uuid))

    def mark_failed(self, event_uuid: str, error_code: str, *, now: float | None = None) -> float:
        """Record a failed attempt and schedule the next one with exponential backoff; returns its time."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            row = db.execute("SELECT attempts FROM events WHERE uuid = ?", (event_uuid,)).fetchone()
            attempts = (row[0] if row else 0) + 1
            next_at = stamp + min(2.0 ** (attempts - 1), MAX_BACKOFF_S)
            db.execute(
                "UPDATE events SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE uuid = ?",
                (attempts, next_at, error_code[:200], event_uuid),
            )
        return next_at

    def retry_waiting_now(self, *, now: float | None = None) -> int:
        """Make every unprocessed event that waits for a retry due now (the backend that held them up is
        back); returns how many."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            return db.execute("UPDATE events SET next_attempt_at = ? WHERE processed_at IS NULL AND "
                              "next_attempt_at > ?", (stamp, stamp)).rowcount

    def prune_processed(self, *, older_than_s: float, now: float | None = None) -> int:
        """Delete events processed more than ``older_than_s`` ago whose delivery is over: remote-pruned (the
        inbox proved it applied and dropped its row) or local-only. Nothing undelivered is ever deleted."""
        cutoff = (time.time() if now is None else now) - older_than_s
        with self._immediate() as db:
            return db.execute(
                f"DELETE FROM events WHERE processed_at IS NOT NULL AND processed_at < ? AND delivery IN "
                f"{_IN_REMOVABLE}", (cutoff,),
            ).rowcount

    # --- remote delivery (the sync drain worker) ----------------------------------

    def delivery_prefix(self, *, limit: int, now: float | None = None) -> list[OutboxEvent]:
        """The ready prefix of undelivered events, by sequence: it ends before the first one whose retry is
        not due yet, so no event is ever delivered ahead of an earlier one."""
        stamp = time.time() if now is None else now
        rows = self._db.execute(f"SELECT {_COLUMNS}, delivery_next_at FROM events WHERE delivery IN "
                                f"{_IN_UNDELIVERED} ORDER BY seq LIMIT ?", (limit,)).fetchall()
        ready = []
        for row in rows:
            if row[11] == RETRY and row[-1] > stamp:
                break
            ready.append(_event(row))
        return ready

    def claim_delivery(self, claims: Sequence[tuple[str, str, str]], token: str) -> list[OutboxEvent]:
        """Mark ``(uuid, transport, digest)`` events claimed by ``token``; an event's transport form and digest
        are fixed by its first claim (a retry sends exactly what the first attempt sent). Returns those it
        claimed, as stored (one another worker already took further is left out)."""
        with self._immediate() as db:
            for event_uuid, transport, digest in claims:
                db.execute(f"UPDATE events SET delivery = ?, delivery_claim = ?, transport = coalesce(transport, ?), "
                           f"digest = coalesce(digest, ?) WHERE uuid = ? AND delivery IN {_IN_UNDELIVERED}",
                           (CLAIMED, token, transport, digest, event_uuid))
        return [e for e in self._by_uuid([c[0] for c in claims]) if e.delivery == CLAIMED]

    def delivered_tail(self) -> int | None:
        """The sequence of the last event the inbox confirmed (the next one's predecessor)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'delivered_tail'").fetchone()
        return int(row[0]) if row else None

    def mark_delivered(self, event_uuids: Sequence[str], *, tail: int, now: float | None = None) -> None:
        """The inbox holds these events (confirmed by readback); ``tail`` becomes the delivered tail."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            db.executemany("UPDATE events SET delivery = ?, delivered_at = ?, delivery_error = NULL "
                           "WHERE uuid = ? AND delivery = ?", [(DELIVERED, stamp, u, CLAIMED) for u in event_uuids])
            db.execute("INSERT INTO meta VALUES ('delivered_tail', ?) ON CONFLICT (key) DO UPDATE SET value = "
                       "excluded.value WHERE CAST(meta.value AS INTEGER) < CAST(excluded.value AS INTEGER)",
                       (str(tail),))

    def mark_delivery_failed(self, event_uuid: str, error_code: str, *, now: float | None = None) -> float:
        """A failed delivery attempt: retried with exponential backoff (at most ``MAX_DELIVERY_BACKOFF_S``)."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            row = db.execute("SELECT delivery_attempts FROM events WHERE uuid = ?", (event_uuid,)).fetchone()
            attempts = (row[0] if row else 0) + 1
            next_at = stamp + min(2.0 ** (attempts - 1), MAX_DELIVERY_BACKOFF_S)
            db.execute(f"UPDATE events SET delivery = ?, delivery_attempts = ?, delivery_next_at = ?, "
                       f"delivery_error = ? WHERE uuid = ? AND delivery IN {_IN_UNDELIVERED}",
                       (RETRY, attempts, next_at, error_code[:200], event_uuid))
        return next_at

    def quarantine_locally(self, event_uuid: str, reason: str) -> None:
        """An event that can never be delivered (no project): kept, listed, and out of the sequence chain."""
        with self._immediate() as db:
            db.execute(f"UPDATE events SET delivery = ?, delivery_error = ? WHERE uuid = ? AND delivery IN "
                       f"{_IN_UNDELIVERED}", (QUARANTINED, reason[:200], event_uuid))

    def requeue_quarantined(self, event_uuid: str) -> OutboxEvent | None:
        """Put an event quarantined here before any delivery back to ``pending``, at the end of the machine's
        sequence (a new sequence number, reserved as ``capture`` does, so it is delivered after every event
        delivered meanwhile and per-machine order holds); same uuid and payload, attempts reset. ``None``
        when no such event is here (unknown, never quarantined, or one the inbox holds)."""
        with self._immediate() as db:
            seq = int(db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()[0])
            moved = db.execute("UPDATE events SET seq = ?, delivery = ?, delivery_attempts = 0, delivery_next_at = 0, "
                               "delivery_error = NULL, delivery_claim = NULL WHERE uuid = ? AND delivery = ? AND "
                               "delivered_at IS NULL AND transport IS NULL",
                               (seq, PENDING, event_uuid, QUARANTINED)).rowcount
            if moved:
                db.execute("UPDATE meta SET value = ? WHERE key = 'next_seq'", (str(seq + 1),))
        found = self._by_uuid([event_uuid])
        return found[0] if moved and found else None

    def awaiting_acknowledgement(self, *, limit: int) -> list[OutboxEvent]:
        """Delivered events, and those the inbox quarantined (an operator may replay them there)."""
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM events WHERE delivery = ? OR (delivery = ? AND delivered_at "
                                "IS NOT NULL) ORDER BY seq LIMIT ?", (DELIVERED, QUARANTINED, limit)).fetchall()
        return [_event(r) for r in rows]

    def acknowledge(self, event_uuids: Sequence[str], *, now: float | None = None) -> None:
        """The inbox proved these events applied."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            db.executemany("UPDATE events SET delivery = ?, acknowledged_at = ?, delivery_error = NULL WHERE uuid = ? "
                           "AND delivered_at IS NOT NULL AND delivery IN (?, ?)",
                           [(ACKNOWLEDGED, stamp, u, DELIVERED, QUARANTINED) for u in event_uuids])

    def mark_remote_quarantined(self, event_uuid: str, reason: str) -> None:
        with self._immediate() as db:
            db.execute("UPDATE events SET delivery = ?, delivery_error = ? WHERE uuid = ? AND delivery = ?",
                       (QUARANTINED, reason[:200], event_uuid, DELIVERED))

    def reopen_delivered(self, event_uuid: str) -> None:
        """A quarantined event the inbox holds open again (replayed): wait for its application again."""
        with self._immediate() as db:
            db.execute("UPDATE events SET delivery = ?, delivery_error = NULL WHERE uuid = ? AND delivery = ? "
                       "AND delivered_at IS NOT NULL", (DELIVERED, event_uuid, QUARANTINED))

    def note_delivery_error(self, event_uuid: str, error_code: str) -> None:
        with self._immediate() as db:
            db.execute("UPDATE events SET delivery_error = ? WHERE uuid = ?", (error_code[:200], event_uuid))

    def acknowledged(self, *, limit: int) -> list[OutboxEvent]:
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM events WHERE delivery = ? ORDER BY seq LIMIT ?",
                                (ACKNOWLEDGED, limit)).fetchall()
        return [_event(r) for r in rows]

    def mark_remote_pruned(self, event_uuids: Sequence[str], *, now: float | None = None) -> None:
        """The inbox row is gone (exact delete, or proved missing): the local row may now be retired."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            db.executemany("UPDATE events SET delivery = ?, remote_pruned_at = ? WHERE uuid = ? AND delivery = ?",
                           [(REMOTE_PRUNED, stamp, u, ACKNOWLEDGED) for u in event_uuids])

    def project_roots(self) -> list[str]:
        """The project roots of the events whose delivery is not over, by first appearance."""
        rows = self._db.execute(f"SELECT json_extract(payload, '$.project') AS root FROM events WHERE delivery NOT IN "
                                f"{_IN_REMOVABLE} AND root IS NOT NULL GROUP BY root ORDER BY MIN(seq)").fetchall()
        return [str(r[0]) for r in rows if isinstance(r[0], str)]

    def previous_tool_event(self, item: OutboxEvent) -> OutboxEvent | None:
        """The PostToolUse event of ``item``'s session captured just before it, if still kept."""
        session = item.payload.get("session_id")
        if not isinstance(session, str):
            return None
        row = self._db.execute(f"SELECT {_COLUMNS} FROM events WHERE seq < ? AND event = 'PostToolUse' AND "
                               "json_extract(payload, '$.session_id') = ? ORDER BY seq DESC LIMIT 1",
                               (item.seq, session)).fetchone()
        return _event(row) if row else None

    def tool_events(self, root: str, tools: Sequence[str], kind: str | None = None) -> list[OutboxEvent]:
        """The PostToolUse events of the project at ``root`` by the tools named, or of the ``kind`` their agent
        gave (``sync.facts``), still kept, by sequence."""
        marks = ", ".join("?" for _ in tools) or "NULL"
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM events WHERE event = 'PostToolUse' AND json_extract(payload, "
                                f"'$.project') = ? AND (json_extract(payload, '$.tool_facts.tool') IN ({marks}) "
                                "OR json_extract(payload, '$.tool_facts.kind') = ?) ORDER BY seq",
                                (root, *tools, kind)).fetchall()
        return [_event(r) for r in rows]

    def quarantined(self) -> list[OutboxEvent]:
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM events WHERE delivery = ? ORDER BY seq",
                                (QUARANTINED,)).fetchall()
        return [_event(r) for r in rows]

    def _by_uuid(self, event_uuids: Sequence[str]) -> list[OutboxEvent]:
        found = {}
        for event_uuid in event_uuids:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM events WHERE uuid = ?", (event_uuid,)).fetchone()
            if row is not None:
                found[event_uuid] = _event(row)
        return [found[u] for u in event_uuids if u in found]

    # --- reads --------------------------------------------------------------

    def ready(self, *, limit: int = 50, now: float | None = None) -> list[OutboxEvent]:
        """Unprocessed events due now, in sequence order."""
        stamp = time.time() if now is None else now
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM events WHERE processed_at IS NULL AND next_attempt_at <= ? ORDER BY seq LIMIT ?",
            (stamp, limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def events(self) -> list[OutboxEvent]:
        """Every stored event, by sequence (diagnostics and tests)."""
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM events ORDER BY seq").fetchall()
        return [_event(r) for r in rows]

    def backlog(self) -> Backlog:
        pending, failing, oldest = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(attempts > 0), 0), MIN(created_at) FROM events"
            " WHERE processed_at IS NULL"
        ).fetchone()
        processed = self._db.execute("SELECT COUNT(*) FROM events WHERE processed_at IS NOT NULL").fetchone()[0]
        last = self._db.execute(
            "SELECT last_error FROM events WHERE processed_at IS NULL AND last_error IS NOT NULL"
            " ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        delivery = dict(self._db.execute("SELECT delivery, COUNT(*) FROM events GROUP BY delivery").fetchall())
        undelivered = self._db.execute(f"SELECT MIN(created_at) FROM events WHERE delivery IN {_IN_UNDELIVERED}"
                                       ).fetchone()[0]
        error = self._db.execute("SELECT delivery_error FROM events WHERE delivery_error IS NOT NULL"
                                 " ORDER BY seq DESC LIMIT 1").fetchone()
        return Backlog(int(pending), int(failing), int(processed), oldest, last[0] if last else None,
                       {str(k): int(v) for k, v in delivery.items()}, undelivered, error[0] if error else None)


def read_backlog(home: Path) -> Backlog | None:
    """The backlog of ``home``'s outbox, or ``None`` when no outbox exists yet."""
    path = outbox_path(home)
    if not path.exists():
        return None
    with Outbox(path) as box:
        return box.backlog()


def backlog_report(home: Path) -> dict[str, Any] | None:
    """``read_backlog`` as a JSON-ready dict for status screens; an unreadable outbox gives ``{"error": ...}``."""
    try:
        found = read_backlog(home)
    except OutboxError as exc:
        return {"error": str(exc)}
    return asdict(found) if found is not None else None


def _uuid4() -> str:
    """A random RFC 4122 version-4 UUID (``uuid`` itself imports ``platform``: too slow for hooks)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _unusable(value: Any) -> bool:
    """Whether text in ``value`` holds U+0000 or a lone surrogate (no UTF-8 encoder takes one)."""
    if isinstance(value, str):
        return _UNUSABLE.search(value) is not None
    if isinstance(value, Mapping):
        return any(_unusable(k) or _unusable(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_unusable(v) for v in value)
    return False


_COLUMNS = ("uuid, version, machine_id, seq, event, payload, created_at, attempts, next_attempt_at, processed_at,"
            " last_error, delivery, delivery_attempts, delivery_error, transport, digest, delivered_at")
_IN_UNDELIVERED = "('" + "', '".join(UNDELIVERED) + "')"
_IN_REMOVABLE = "('" + "', '".join(REMOVABLE) + "')"


def _event(row: tuple[Any, ...]) -> OutboxEvent:
    return OutboxEvent(
        uuid=row[0],
        version=row[1],
        machine_id=row[2],
        seq=row[3],
        event=row[4],
        payload=json.loads(row[5]),
        created_at=row[6],
        attempts=row[7],
        next_attempt_at=row[8],
        processed_at=row[9],
        last_error=row[10],
        delivery=row[11],
        delivery_attempts=row[12],
        delivery_error=row[13],
        transport=row[14],
        digest=row[15],
        delivered_at=row[16],
    )
