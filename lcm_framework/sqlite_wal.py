"""Switching an SQLite connection to WAL safely when several processes open a new file at once."""

from __future__ import annotations

import sqlite3
import time

_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def enable_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """``PRAGMA journal_mode = WAL``, retried for up to ``timeout_s``.

    Converting a new file takes an exclusive lock, and SQLite reports a
    concurrent opener's conversion as busy at once, without its busy handler.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in _BUSY_CODES or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
