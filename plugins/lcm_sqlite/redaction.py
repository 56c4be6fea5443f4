"""Redaction counters and the purge of repository-owned mutable project state."""

from __future__ import annotations

from collections.abc import Mapping

from lcm_framework.plugin_api.storage import MAX_SAFE_INT

from .scope import Repository

PURGED_TABLES = ("memories", "recall_stats", "recall_surfacings", "redaction_counts")


class SqliteRedactionAdmin(Repository):
    domain = "redaction_admin"

    def add_counts(self, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        with self._op(write=True) as conn:
            current = dict(conn.execute("SELECT category, count FROM redaction_counts").fetchall())
            for category, count in counts.items():
                if current.get(category, 0) + count > MAX_SAFE_INT:
                    raise self._invalid("a redaction counter would exceed 2^53-1", "integer_out_of_range")
            conn.executemany("INSERT INTO redaction_counts (category, count) VALUES (?, ?) "
                             "ON CONFLICT (category) DO UPDATE SET count = count + excluded.count",
                             list(counts.items()))

    def get_counts(self) -> dict[str, int]:
        with self._op() as conn:
            return dict(conn.execute("SELECT category, count FROM redaction_counts ORDER BY category").fetchall())

    def purge(self) -> None:
        with self._op(write=True) as conn:
            for table in PURGED_TABLES:
                conn.execute(f"DELETE FROM {table}")
