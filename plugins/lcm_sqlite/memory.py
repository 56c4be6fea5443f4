"""Promoted memory: durable notes with ordered tags, confidence and archival."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from lcm_framework.plugin_api.storage import Memory, NewMemory

from .clock import from_us, now_us, to_us
from .scope import Repository

_COLUMNS = "memory_id, content, tags, confidence, source_summary_id, metadata, archived, created_at, updated_at"
_SELECT = f"SELECT {_COLUMNS} FROM memories"


def _memory(row: Sequence[Any]) -> Memory:
    return Memory(memory_id=row[0], content=row[1], tags=tuple(json.loads(row[2])), confidence=row[3],
                  source_summary_id=row[4], metadata=row[5], archived=bool(row[6]), created_at=from_us(row[7]),
                  updated_at=from_us(row[8]))


class SqlitePromotedMemory(Repository):
    domain = "promoted_memory"

    def create_memory(self, memory: NewMemory) -> Memory:
        now = now_us()
        return self._insert(memory, archived=False, created_us=now, updated_us=now)

    def restore_memory(self, memory: Memory) -> Memory:
        new = NewMemory(memory.content, memory.tags, memory.confidence, memory.source_summary_id, memory.metadata)
        return self._insert(new, archived=memory.archived, created_us=to_us(memory.created_at),
                            updated_us=to_us(memory.updated_at))

    def _insert(self, memory: NewMemory, *, archived: bool, created_us: int, updated_us: int) -> Memory:
        with self._op(write=True) as conn:
            cur = conn.execute(
                "INSERT INTO memories (content, tags, confidence, source_summary_id, metadata, archived, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (memory.content, json.dumps(list(memory.tags)), float(memory.confidence), memory.source_summary_id,
                 memory.metadata, int(bool(archived)), created_us, updated_us))
            return self._load(conn, cur.lastrowid)

    def get_memory(self, memory_id: int) -> Memory | None:
        with self._op() as conn:
            row = conn.execute(f"{_SELECT} WHERE memory_id = ?", (memory_id,)).fetchone()
        return _memory(row) if row else None

    def list_memories(self, *, include_archived: bool = False, tag: str | None = None) -> list[Memory]:
        sql = f"{_SELECT} WHERE (? OR archived = 0)"
        args: list[object] = [int(bool(include_archived))]
        if tag is not None:
            sql += " AND EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value = ?)"
            args.append(tag)
        with self._op() as conn:
            rows = conn.execute(sql + " ORDER BY created_at, memory_id", args).fetchall()
        return [_memory(r) for r in rows]

    def set_confidence(self, memory_id: int, confidence: float, *, metadata: str | None = None) -> Memory:
        if metadata is None:
            return self._update(memory_id, "confidence = ?", float(confidence))
        return self._update(memory_id, "confidence = ?, metadata = ?", float(confidence), metadata)

    def archive(self, memory_id: int) -> Memory:
        return self._update(memory_id, "archived = ?", 1)

    def revive(self, memory_id: int) -> Memory:
        return self._update(memory_id, "archived = ?", 0)

    def stale_candidates(self, *, older_than: datetime, max_confidence: float) -> list[Memory]:
        with self._op() as conn:
            rows = conn.execute(f"{_SELECT} WHERE archived = 0 AND updated_at < ? AND confidence <= ? "
                                "ORDER BY updated_at, memory_id", (to_us(older_than), float(max_confidence)))
            return [_memory(r) for r in rows]

    def delete_memory(self, memory_id: int) -> None:
        with self._op(write=True) as conn:
            if conn.execute("DELETE FROM memories WHERE memory_id = ?", (memory_id,)).rowcount == 0:
                raise self._not_found("memory")

    def _update(self, memory_id: int, assignment: str, *values: float | int | str) -> Memory:
        with self._op(write=True) as conn:
            cur = conn.execute(f"UPDATE memories SET {assignment}, updated_at = ? WHERE memory_id = ?",
                               (*values, now_us(), memory_id))
            if cur.rowcount == 0:
                raise self._not_found("memory")
            return self._load(conn, memory_id)

    def _load(self, conn: sqlite3.Connection, memory_id: int | None) -> Memory:
        return _memory(conn.execute(f"{_SELECT} WHERE memory_id = ?", (memory_id,)).fetchone())
