"""Completed-session ingest records and fenced, expiring leases (state in the database: works across processes)."""

from __future__ import annotations

import sqlite3

from lcm_framework.plugin_api.storage import Lease, SessionIngestRecord

from .clock import from_us, now_us, to_us
from .scope import Repository


class SqliteCoordination(Repository):
    domain = "coordination"

    def record_session_ingest(self, record: SessionIngestRecord) -> None:
        with self._op(write=True) as conn:
            conn.execute(
                "INSERT INTO session_ingests (session_id, source, completed_at, message_count) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET source = excluded.source, "
                "completed_at = excluded.completed_at, message_count = excluded.message_count",
                (record.session_id, record.source, to_us(record.completed_at), record.message_count))

    def get_session_ingest(self, session_id: str) -> SessionIngestRecord | None:
        with self._op() as conn:
            row = conn.execute("SELECT session_id, source, completed_at, message_count FROM session_ingests "
                               "WHERE session_id = ?", (session_id,)).fetchone()
        return None if row is None else SessionIngestRecord(row[0], row[1], from_us(row[2]), row[3])

    def acquire_lease(self, name: str, holder: str, ttl_seconds: float) -> Lease | None:
        with self._op(write=True) as conn:
            now = now_us()
            row = conn.execute("SELECT holder, fence, expires_at FROM leases WHERE name = ?", (name,)).fetchone()
            expires = now + int(ttl_seconds * 1_000_000)
            if row is None:
                fence = 1
            elif row[0] == holder and row[2] > now:
                fence = row[1]
            elif row[0] is None or row[2] <= now:
                fence = row[1] + 1
            else:
                return None
            conn.execute("INSERT INTO leases (name, holder, fence, expires_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, fence = excluded.fence, "
                         "expires_at = excluded.expires_at", (name, holder, fence, expires))
        return Lease(name, holder, fence, from_us(expires))

    def renew_lease(self, lease: Lease, ttl_seconds: float) -> Lease:
        with self._op(write=True) as conn:
            now = now_us()
            self._require_live(conn, lease, now)
            expires = now + int(ttl_seconds * 1_000_000)
            conn.execute("UPDATE leases SET expires_at = ? WHERE name = ?", (expires, lease.name))
        return Lease(lease.name, lease.holder, lease.fence, from_us(expires))

    def release_lease(self, lease: Lease) -> None:
        with self._op(write=True) as conn:
            conn.execute("UPDATE leases SET holder = NULL, expires_at = 0 WHERE name = ? AND holder = ? "
                         "AND fence = ?", (lease.name, lease.holder, lease.fence))

    def check_fence(self, lease: Lease) -> None:
        with self._op() as conn:
            self._require_live(conn, lease, now_us())

    def _require_live(self, conn: sqlite3.Connection, lease: Lease, now: int) -> None:
        row = conn.execute("SELECT holder, fence, expires_at FROM leases WHERE name = ?", (lease.name,)).fetchone()
        if row is None or row[0] != lease.holder or row[1] != lease.fence or row[2] <= now:
            raise self._conflict("the lease was lost (expired or granted to another holder)", "lease_lost")
