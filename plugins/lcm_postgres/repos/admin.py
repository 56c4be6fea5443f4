"""Redaction counters and the project purge."""

from __future__ import annotations

from collections.abc import Mapping

from .base import Repository


class PgRedactionAdmin(Repository):
    domain = "redaction_admin"

    def add_counts(self, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        with self._cursor() as cur:
            cur.execute(
                "INSERT INTO redaction_counts AS r (project_id, category, count) "
                "SELECT %s, u.category, u.count FROM unnest(%s::text[], %s::bigint[]) AS u(category, count) "
                "ON CONFLICT (project_id, category) DO UPDATE SET count = r.count + excluded.count",
                (self._project, list(counts), list(counts.values())),
            )

    def get_counts(self) -> dict[str, int]:
        with self._cursor() as cur:
            cur.execute("SELECT category, count FROM redaction_counts WHERE project_id = %s AND count > 0 "
                        "ORDER BY category", (self._project,))
            return {c: self._int(n) for c, n in cur.fetchall()}

    def purge(self) -> None:
        with self._cursor() as cur:
            for table in ("memories", "recall_stats", "recall_surfacings", "redaction_counts"):
                cur.execute(f"DELETE FROM {table} WHERE project_id = %s", (self._project,))
