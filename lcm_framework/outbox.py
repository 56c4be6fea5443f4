"""The local hook outbox: a private SQLite queue of agent hook events.

Hooks capture an event here when the daemon or the storage backend cannot
take it; the daemon drains it when it is back. It holds hook payloads only
(event name, session id, paths), never transcript content, and is not a cache
of project memory. Events carry a transport UUID, the durable machine id and
an installation-wide sequence reserved in the same transaction as the insert
(gap-safe). Delivery is at-least-once; consumers are idempotent.

This module is self-contained on purpose: it is one of the three places
allowed to use ``sqlite3`` directly, and it never hands its handle out.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import LcmError
from .sqlite_files import open_private

SCHEMA_VERSION = 1
TRANSPORT_VERSION = 1
MAX_PAYLOAD_BYTES = 64 * 1024
MAX_BACKOFF_S = 300.0
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


@dataclass(frozen=True, slots=True)
class Backlog:
    """Unprocessed events: ``pending`` in total, ``failing`` of them already retried at least once."""

    pending: int
    failing: int
    processed: int
    oldest_created_at: float | None
    last_error: str | None


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

    def mark_processed(self, event_uuid: str, *, error_code: str | None = None, now: float | None = None) -> None:
        """Done with this event; ``error_code`` records why when it was given up as permanently invalid."""
        stamp = time.time() if now is None else now
        with self._immediate() as db:
            db.execute(
                "UPDATE events SET processed_at = ?, last_error = ? WHERE uuid = ? AND processed_at IS NULL",
                (stamp, error_code[:200] if error_code else None, event_uuid),
            )

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

    def prune_processed(self, *, older_than_s: float, now: float | None = None) -> int:
        """Delete processed events older than ``older_than_s`` (the local outbox has no remote delivery)."""
        cutoff = (time.time() if now is None else now) - older_than_s
        with self._immediate() as db:
            return db.execute(
                "DELETE FROM events WHERE processed_at IS NOT NULL AND processed_at < ?", (cutoff,)
            ).rowcount

    # --- reads --------------------------------------------------------------

    def ready(self, *, limit: int = 50, now: float | None = None) -> list[OutboxEvent]:
        """Unprocessed events due now, in sequence order."""
        stamp = time.time() if now is None else now
        rows = self._db.execute(
            "SELECT uuid, version, machine_id, seq, event, payload, created_at, attempts, next_attempt_at,"
            " processed_at, last_error FROM events WHERE processed_at IS NULL AND next_attempt_at <= ?"
            " ORDER BY seq LIMIT ?",
            (stamp, limit),
        ).fetchall()
        return [_event(r) for r in rows]

    def events(self) -> list[OutboxEvent]:
        """Every stored event, by sequence (diagnostics and tests)."""
        rows = self._db.execute(
            "SELECT uuid, version, machine_id, seq, event, payload, created_at, attempts, next_attempt_at,"
            " processed_at, last_error FROM events ORDER BY seq"
        ).fetchall()
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
        return Backlog(int(pending), int(failing), int(processed), oldest, last[0] if last else None)


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
    )
