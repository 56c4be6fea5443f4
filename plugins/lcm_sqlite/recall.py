"""Recall history: when targets were surfaced, and whether they proved useful."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from lcm_framework.plugin_api.storage import RecallStats, Surfacing

from .clock import from_us, now_us, opt_dt, opt_us, to_us
from .scope import Repository
from .statements import chunks, marks


class SqliteRecall(Repository):
    domain = "recall"

    def record_surfacing(self, target_ids: Sequence[str], *, query: str | None = None) -> None:
        if not target_ids:
            return
        now = now_us()
        with self._op(write=True) as conn:
            conn.executemany("INSERT INTO recall_surfacings (target_id, query, surfaced_at) VALUES (?, ?, ?)",
                             [(t, query, now) for t in target_ids])
            conn.executemany(
                "INSERT INTO recall_stats (target_id, surfaced, last_surfaced_at) VALUES (?, 1, ?) "
                "ON CONFLICT (target_id) DO UPDATE SET surfaced = surfaced + 1, last_surfaced_at = excluded.last_surfaced_at",  # noqa: E501
                [(t, now) for t in target_ids])

    def record_feedback(self, target_id: str, *, useful: bool) -> None:
        column = "useful" if useful else "not_useful"
        with self._op(write=True) as conn:
            conn.execute(f"INSERT INTO recall_stats (target_id, {column}) VALUES (?, 1) "
                         f"ON CONFLICT (target_id) DO UPDATE SET {column} = {column} + 1", (target_id,))

    def stats(self, target_id: str) -> RecallStats:
        with self._op() as conn:
            row = conn.execute("SELECT surfaced, useful, not_useful, last_surfaced_at FROM recall_stats "
                               "WHERE target_id = ?", (target_id,)).fetchone()
        if row is None:
            return RecallStats(target_id, 0, 0, 0, None)
        return RecallStats(target_id, row[0], row[1], row[2], opt_dt(row[3]))

    def surfacings(self, target_id: str) -> list[Surfacing]:
        with self._op() as conn:
            rows = conn.execute("SELECT query, surfaced_at FROM recall_surfacings WHERE target_id = ? "
                                "ORDER BY surfaced_at, surfacing_id", (target_id,)).fetchall()
        return [Surfacing(target_id, q, from_us(t)) for q, t in rows]

    def restore_history(self, stats: RecallStats, surfacings: Sequence[Surfacing]) -> None:
        with self._op(write=True) as conn:
            self._delete(conn, [stats.target_id])
            conn.execute("INSERT INTO recall_stats (target_id, surfaced, useful, not_useful, last_surfaced_at) "
                         "VALUES (?, ?, ?, ?, ?)", (stats.target_id, stats.surfaced, stats.useful, stats.not_useful,
                                                    opt_us(stats.last_surfaced_at)))
            conn.executemany("INSERT INTO recall_surfacings (target_id, query, surfaced_at) VALUES (?, ?, ?)",
                             [(s.target_id, s.query, to_us(s.surfaced_at)) for s in surfacings])

    def forget(self, target_ids: Sequence[str]) -> None:
        with self._op(write=True) as conn:
            self._delete(conn, target_ids)

    @staticmethod
    def _delete(conn: sqlite3.Connection, target_ids: Sequence[str]) -> None:
        for chunk in chunks(list(target_ids)):
            for table in ("recall_stats", "recall_surfacings"):
                conn.execute(f"DELETE FROM {table} WHERE target_id IN ({marks(chunk)})", list(chunk))
