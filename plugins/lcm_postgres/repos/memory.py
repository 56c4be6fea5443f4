"""Promoted memories and recall statistics."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from lcm_framework.plugin_api.storage import Memory, NewMemory, RecallStats, Surfacing

from .base import Repository, utc, utc_required

_COLUMNS = "memory_id, content, tags, confidence, source_summary_id, metadata, archived, created_at, updated_at"


class PgMemory(Repository):
    domain = "promoted_memory"

    def _memory(self, r: Sequence[Any]) -> Memory:
        return Memory(self._int(r[0]), r[1], tuple(r[2]), float(r[3]), r[4], r[5], bool(r[6]),
                      utc_required(r[7]), utc_required(r[8]))

    def create_memory(self, memory: NewMemory) -> Memory:
        return self._insert(memory, archived=False, created_at=None, updated_at=None)

    def restore_memory(self, memory: Memory) -> Memory:
        new = NewMemory(memory.content, memory.tags, memory.confidence, memory.source_summary_id, memory.metadata)
        return self._insert(new, archived=memory.archived, created_at=utc_required(memory.created_at),
                            updated_at=utc_required(memory.updated_at))

    def _insert(self, memory: NewMemory, *, archived: bool, created_at: datetime | None,
                updated_at: datetime | None) -> Memory:
        confidence = float(memory.confidence)
        with self._cursor() as cur:
            cur.execute(f"INSERT INTO memories (project_id, content, tags, confidence, source_summary_id, metadata, "
                        f"archived, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, "
                        f"coalesce(%s, clock_timestamp()), coalesce(%s, clock_timestamp())) RETURNING {_COLUMNS}",
                        (self._project, memory.content, list(memory.tags), confidence, memory.source_summary_id,
                         memory.metadata, bool(archived), created_at, updated_at))
            return self._memory(cur.fetchone())

    def delete_memory(self, memory_id: int) -> None:
        with self._cursor() as cur:
            cur.execute("DELETE FROM memories WHERE project_id = %s AND memory_id = %s", (self._project, memory_id))
            if cur.rowcount == 0:
                raise self._not_found("memory")

    def get_memory(self, memory_id: int) -> Memory | None:
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM memories WHERE project_id = %s AND memory_id = %s",
                        (self._project, memory_id))
            row = cur.fetchone()
        return self._memory(row) if row else None

    def list_memories(self, *, include_archived: bool = False, tag: str | None = None) -> list[Memory]:
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM memories WHERE project_id = %s AND (%s OR NOT archived) "
                        "AND (%s::text IS NULL OR %s::text = ANY(tags)) ORDER BY created_at, memory_id",
                        (self._project, bool(include_archived), tag, tag))
            return [self._memory(r) for r in cur.fetchall()]

    def _update(self, memory_id: int, assignment: str, *values: Any) -> Memory:
        with self._cursor() as cur:
            cur.execute(f"UPDATE memories SET {assignment}, updated_at = clock_timestamp() "
                        f"WHERE project_id = %s AND memory_id = %s RETURNING {_COLUMNS}",
                        (*values, self._project, memory_id))
            row = cur.fetchone()
        if row is None:
            raise self._not_found("memory")
        return self._memory(row)

    def set_confidence(self, memory_id: int, confidence: float, *, metadata: str | None = None) -> Memory:
        if metadata is None:
            return self._update(memory_id, "confidence = %s", float(confidence))
        return self._update(memory_id, "confidence = %s, metadata = %s", float(confidence), metadata)

    def archive(self, memory_id: int) -> Memory:
        return self._update(memory_id, "archived = %s", True)

    def revive(self, memory_id: int) -> Memory:
        return self._update(memory_id, "archived = %s", False)

    def stale_candidates(self, *, older_than: datetime, max_confidence: float) -> list[Memory]:
        limit = float(max_confidence)
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM memories WHERE project_id = %s AND NOT archived "
                        "AND updated_at < %s AND confidence <= %s ORDER BY updated_at, memory_id",
                        (self._project, utc(older_than), limit))
            return [self._memory(r) for r in cur.fetchall()]


class PgRecall(Repository):
    domain = "recall"

    def record_surfacing(self, target_ids: Sequence[str], *, query: str | None = None) -> None:
        if not target_ids:
            return
        with self._cursor() as cur:
            cur.execute(
                "INSERT INTO recall_stats AS r (project_id, target_id, surfaced, last_surfaced_at, last_query) "
                "SELECT %s, t.id, count(*), clock_timestamp(), %s FROM unnest(%s::text[]) AS t(id) GROUP BY t.id "
                "ON CONFLICT (project_id, target_id) DO UPDATE SET surfaced = r.surfaced + excluded.surfaced, "
                "last_surfaced_at = excluded.last_surfaced_at, last_query = excluded.last_query",
                (self._project, query, list(target_ids)),
            )
            cur.execute("INSERT INTO recall_surfacings (project_id, target_id, query, surfaced_at) "
                        "SELECT %s, t.id, %s, clock_timestamp() FROM unnest(%s::text[]) AS t(id)",
                        (self._project, query, list(target_ids)))

    def record_feedback(self, target_id: str, *, useful: bool) -> None:
        column = "useful" if useful else "not_useful"
        with self._cursor() as cur:
            cur.execute(f"INSERT INTO recall_stats AS r (project_id, target_id, {column}) VALUES (%s, %s, 1) "
                        f"ON CONFLICT (project_id, target_id) DO UPDATE SET {column} = r.{column} + 1",
                        (self._project, target_id))

    def stats(self, target_id: str) -> RecallStats:
        with self._cursor() as cur:
            cur.execute("SELECT surfaced, useful, not_useful, last_surfaced_at FROM recall_stats "
                        "WHERE project_id = %s AND target_id = %s", (self._project, target_id))
            row = cur.fetchone()
        if row is None:
            return RecallStats(target_id, 0, 0, 0, None)
        return RecallStats(target_id, self._int(row[0]), self._int(row[1]), self._int(row[2]), utc(row[3]))

    def surfacings(self, target_id: str) -> list[Surfacing]:
        with self._cursor() as cur:
            cur.execute("SELECT query, surfaced_at FROM recall_surfacings WHERE project_id = %s AND target_id = %s "
                        "ORDER BY surfaced_at, surfacing_id", (self._project, target_id))
            return [Surfacing(target_id, q, utc_required(t)) for q, t in cur.fetchall()]

    def restore_history(self, stats: RecallStats, surfacings: Sequence[Surfacing]) -> None:
        with self._cursor() as cur:
            self._delete(cur, [stats.target_id])
            cur.execute("INSERT INTO recall_stats (project_id, target_id, surfaced, useful, not_useful, "
                        "last_surfaced_at) VALUES (%s, %s, %s, %s, %s, %s)",
                        (self._project, stats.target_id, stats.surfaced, stats.useful, stats.not_useful,
                         utc(stats.last_surfaced_at)))
            cur.execute("INSERT INTO recall_surfacings (project_id, target_id, query, surfaced_at) "
                        "SELECT %s, %s, q, t FROM unnest(%s::text[], %s::timestamptz[]) AS u(q, t)",
                        (self._project, stats.target_id, [s.query for s in surfacings],
                         [utc_required(s.surfaced_at) for s in surfacings]))

    def forget(self, target_ids: Sequence[str]) -> None:
        with self._cursor() as cur:
            self._delete(cur, target_ids)

    def _delete(self, cur: Any, target_ids: Sequence[str]) -> None:
        for table in ("recall_stats", "recall_surfacings"):
            cur.execute(f"DELETE FROM {table} WHERE project_id = %s AND target_id = ANY(%s::text[])",
                        (self._project, list(target_ids)))
