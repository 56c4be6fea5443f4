"""The metadata-only local quarantine of rejected transcript records.

One private SQLite file per project and client:
``$LCM_HOME/transcript-quarantine/<sha256(project id)>/<sha256(client name)>.db``
(directories 0700, file 0600). A row holds the client-root-relative locator,
the source ordinal, a bounded reason code, the SHA-256 of the rejected line
and the quarantine time: never the payload, not even partially scrubbed.
The schema is created inside one ``BEGIN IMMEDIATE`` transaction that also
sets ``PRAGMA user_version``; any other schema fails closed.

This is, with the SQLite storage backend, the only module that talks to
``sqlite3`` directly.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..paths import lcm_home
from ..safe_paths import ensure_private_dir
from ..sqlite_files import open_private
from .errors import QuarantineStoreError

SCHEMA_VERSION = 1
REASONS = (
    "invalid-utf8",
    "binary-input",
    "record-too-large",
    "malformed-json",
    "non-container-json",
    "nul-character",
    "redacted-key-collision",
    "residual-secret",
    "nesting-too-deep",
)
_REASON_SQL = ", ".join(f"'{r}'" for r in REASONS)
TABLE_SQL = (
    "CREATE TABLE quarantined_records ("
    "locator TEXT NOT NULL CHECK (length(locator) BETWEEN 1 AND 4096), "
    "ordinal INTEGER NOT NULL CHECK (ordinal BETWEEN 0 AND 9007199254740991), "
    f"reason TEXT NOT NULL CHECK (reason IN ({_REASON_SQL})), "
    "sha256 TEXT NOT NULL CHECK (length(sha256) = 64), "
    "quarantined_at TEXT NOT NULL, "
    "UNIQUE (locator, ordinal, reason, sha256)"
    ") STRICT"
)
INDEX_SQL = "CREATE INDEX quarantined_records_by_reason ON quarantined_records (reason, locator, ordinal)"


@dataclass(frozen=True, slots=True)
class QuarantineEntry:
    locator: str
    ordinal: int
    reason: str
    sha256: str
    quarantined_at: datetime


def quarantine_root(home: Path | None = None) -> Path:
    return (home if home is not None else lcm_home()) / "transcript-quarantine"


def quarantine_path(project_id: str, client_name: str, home: Path | None = None) -> Path:
    digest = lambda text: hashlib.sha256(text.encode("utf-8")).hexdigest()  # noqa: E731
    return quarantine_root(home) / digest(project_id) / f"{digest(client_name)}.db"


def _normalize(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


class QuarantineStore:
    """The quarantine of one project and client; ``add`` is idempotent per (locator, ordinal, reason, sha).

    Usable from any thread (one call at a time, serialized by a lock)."""

    def __init__(self, project_id: str, client_name: str, home: Path | None = None) -> None:
        self.client_name = client_name
        self._lock = threading.Lock()
        self.path = quarantine_path(project_id, client_name, home)
        ensure_private_dir(self.path.parent.parent, home=home)
        ensure_private_dir(self.path.parent, home=home)
        try:
            self._db = open_private(self.path, 30, wal=False)
        except (OSError, sqlite3.Error) as exc:
            raise QuarantineStoreError(f"cannot open the quarantine store ({type(exc).__name__})") from None
        try:
            self._migrate()
        except BaseException:
            self._db.close()
            raise

    def _migrate(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                objects = dict(
                    self._db.execute(
                        "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'index') "
                        "AND name NOT LIKE 'sqlite_%'"
                    ).fetchall()
                )
                if version == 0 and not objects:
                    self._db.execute(TABLE_SQL)
                    self._db.execute(INDEX_SQL)
                    self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                elif version in (0, SCHEMA_VERSION) and _normalize(objects.get("quarantined_records") or "") \
                        == _normalize(TABLE_SQL):
                    index = objects.pop("quarantined_records_by_reason", None)
                    if index is None:
                        self._db.execute(INDEX_SQL)  # repair only the managed index
                    elif _normalize(index) != _normalize(INDEX_SQL):
                        raise QuarantineStoreError("quarantine store index drifted", code="quarantine_schema")
                    if set(objects) != {"quarantined_records"}:
                        raise QuarantineStoreError("quarantine store has unknown objects",
                                                   code="quarantine_schema")
                    if version == 0:
                        self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                else:
                    raise QuarantineStoreError(
                        f"unsupported quarantine store schema (version {version})", code="quarantine_schema"
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise QuarantineStoreError(f"quarantine store unusable ({type(exc).__name__})") from None

    def add(self, entries: Iterable[tuple[str, int, str, str]]) -> int:
        """Record ``(locator, ordinal, reason, sha256)`` rows; returns how many were new."""
        rows = list(entries)
        for _loc, _ord, reason, _sha in rows:
            if reason not in REASONS:
                raise QuarantineStoreError(f"unknown quarantine reason {reason!r}", code="quarantine_reason")
        if not rows:
            return 0
        now = datetime.now(UTC).isoformat()
        with self._lock:
            return self._insert([(*row, now) for row in rows])

    def _insert(self, rows: list[tuple[str, int, str, str, str]]) -> int:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            before = self._db.total_changes
            self._db.executemany(
                "INSERT OR IGNORE INTO quarantined_records (locator, ordinal, reason, sha256, quarantined_at) "
                "VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            added = self._db.total_changes - before
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise QuarantineStoreError(f"cannot write the quarantine store ({type(exc).__name__})") from None
        return added

    def list(self, locator: str | None = None) -> list[QuarantineEntry]:
        """Rows by locator, then ordinal (all locators when ``locator`` is None)."""
        sql = "SELECT locator, ordinal, reason, sha256, quarantined_at FROM quarantined_records"
        args: tuple[str, ...] = ()
        if locator is not None:
            sql += " WHERE locator = ?"
            args = (locator,)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY locator, ordinal, reason, sha256", args).fetchall()
        return [QuarantineEntry(r[0], r[1], r[2], r[3], datetime.fromisoformat(r[4])) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> QuarantineStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
