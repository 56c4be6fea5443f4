"""Recall history: when targets were surfaced, and whether they proved useful."""

from __future__ import annotations

from collections.abc import Sequence

from lcm_framework.storage.models import RecallStats

from .clock import now_us, opt_dt
from .scope import Repository


class SqliteRecall(Repository):
    domain = "recall"

    def record_surfacing(self, target_ids: Sequence[str], *, query: str | None = None) -> None:
        self._check.texts("target_id", target_ids)
        self._check.text("query", query)
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
        self._check.text("target_id", target_id)
        column = "useful" if useful else "not_useful"
        with self._op(write=True) as conn:
            conn.execute(f"INSERT INTO recall_stats (target_id, {column}) VALUES (?, 1) "
                         f"ON CONFLICT (target_id) DO UPDATE SET {column} = {column} + 1", (target_id,))

    def stats(self, target_id: str) -> RecallStats:
        self._check.text("target_id", target_id)
        with self._op() as conn:
            row = conn.execute("SELECT surfaced, useful, not_useful, last_surfaced_at FROM recall_stats "
                               "WHERE target_id = ?", (target_id,)).fetchone()
        if row is None:
            return RecallStats(target_id, 0, 0, 0, None)
        return RecallStats(target_id, row[0], row[1], row[2], opt_dt(row[3]))
