"""The semantic lane's vectors: a BLOB per message and summary, scanned with NumPy (``VectorIndex``).

Each project database file keeps one ``VectorIndex`` per target in this process's memory (the sign bits of its
vectors), kept across the scopes opened on it (the MCP server and ``lcm ui`` open one per request) and brought
up to date from the rows added since before each scan; the best candidates are ranked exactly by cosine over
their stored bytes, read back by row number (a row deleted since is not found and drops out).
"""

from __future__ import annotations

import os
import sqlite3
from collections import OrderedDict
from collections.abc import Sequence

from lcm_framework.plugin_api.embedding import VectorIndex, candidates_wanted, cosine
from lcm_framework.plugin_api.storage import (
    SearchHit,
    SearchTarget,
    StoredVector,
    VectorCount,
    VectorQuery,
    VectorSpace,
)

from .clock import from_us
from .scope import Repository
from .statements import chunks, marks

# target -> (vector table, id column, the table it belongs to)
TABLES = {SearchTarget.MESSAGES: ("message_vectors", "message_id", "messages"),
          SearchTarget.SUMMARIES: ("summary_vectors", "summary_id", "summaries")}
LOAD_CHUNK = 20_000

KEPT_FILES = 8
"""Database files whose indexes a process keeps, the most recently searched."""

_INDEXES: OrderedDict[tuple[int, int], dict[SearchTarget, VectorIndex]] = OrderedDict()


def _file_key(conn: sqlite3.Connection) -> tuple[int, int]:
    """The (device, inode) of the connection's main database file."""
    found = os.stat(conn.execute("PRAGMA database_list").fetchone()[2])
    return found.st_dev, found.st_ino


def _indexes(conn: sqlite3.Connection) -> dict[SearchTarget, VectorIndex]:
    key = _file_key(conn)
    found = _INDEXES.pop(key, None) or {}
    _INDEXES[key] = found
    while len(_INDEXES) > KEPT_FILES:
        _INDEXES.popitem(last=False)
    return found


class SqliteVectors(Repository):
    domain = "vectors"

    def space(self) -> VectorSpace | None:
        with self._op() as conn:
            row = conn.execute("SELECT embedder, dimensions FROM vector_space").fetchone()
        return None if row is None else VectorSpace(row[0], row[1])

    def set_space(self, space: VectorSpace) -> bool:
        with self._op(write=True) as conn:
            row = conn.execute("SELECT embedder, dimensions FROM vector_space").fetchone()
            if row is not None and (row[0], row[1]) == (space.embedder, space.dimensions):
                return False
            dropped = row is not None
            if dropped:
                for table, _, _ in TABLES.values():
                    conn.execute(f"DELETE FROM {table}")
            conn.execute("INSERT INTO vector_space (singleton, embedder, dimensions) VALUES (1, ?, ?) "
                         "ON CONFLICT (singleton) DO UPDATE SET embedder = excluded.embedder, "
                         "dimensions = excluded.dimensions", (space.embedder, space.dimensions))
            if dropped:
                _INDEXES.pop(_file_key(conn), None)
        return dropped

    def put(self, vectors: Sequence[StoredVector]) -> int:
        added = 0
        with self._op(write=True) as conn:
            row = conn.execute("SELECT dimensions FROM vector_space").fetchone()
            if row is None:
                raise self._conflict("no vector space is recorded: set_space first", "no_vector_space")
            for v in vectors:
                if len(v.vector) != row[0]:
                    raise self._invalid(f"a vector of {len(v.vector)} bytes in a space of {row[0]} dimensions",
                                        "invalid_vector")
            for target, (table, column, owner) in TABLES.items():
                rows = [(int(v.target_id) if target is SearchTarget.MESSAGES else v.target_id, v.vector)
                        for v in vectors if v.target is target]
                if rows:
                    before = conn.total_changes
                    conn.executemany(
                        f"INSERT INTO {table} ({column}, vector) SELECT ?1, ?2 WHERE EXISTS "
                        f"(SELECT 1 FROM {owner} WHERE {column} = ?1) ON CONFLICT ({column}) DO NOTHING", rows)
                    added += conn.total_changes - before
        return added

    def unembedded(self, target: SearchTarget, *, after: str | None = None, limit: int) -> list[str]:
        table, column, owner = TABLES[target]
        where = ""
        args: list[object] = []
        if after is not None:
            where = "o.rowid > coalesce((SELECT rowid FROM " + owner + f" WHERE {column} = ?), -1) AND "
            args.append(int(after) if target is SearchTarget.MESSAGES and after.isdigit() else after)
        with self._op() as conn:
            rows = conn.execute(
                f"SELECT o.{column} FROM {owner} o WHERE {where}NOT EXISTS (SELECT 1 FROM {table} v "
                f"WHERE v.{column} = o.{column}) ORDER BY o.rowid LIMIT ?", (*args, limit)).fetchall()
        return [str(r[0]) for r in rows]

    def counts(self) -> dict[SearchTarget, VectorCount]:
        out = {}
        with self._op() as conn:
            for target, (table, column, owner) in TABLES.items():
                newest = conn.execute(f"SELECT {column} FROM {table} ORDER BY {column} DESC LIMIT 1").fetchone() \
                    if target is SearchTarget.MESSAGES else None
                out[target] = VectorCount(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0],
                                          conn.execute(f"SELECT count(*) FROM {owner}").fetchone()[0],
                                          None if newest is None else str(newest[0]))
        return out

    def nearest(self, query: VectorQuery) -> list[SearchHit]:
        table, column, owner = TABLES[query.target]
        limit = query.limit if query.limit is not None and query.limit >= 0 else 1_000_000
        with self._op() as conn:
            index = _indexes(conn).setdefault(query.target, VectorIndex())
            self._load(conn, index, query.target)
            excluded = [] if query.include_subagents else [
                r[0] for r in conn.execute("SELECT child_conversation_id FROM subagent_links")]
            picked = index.candidates(query.vector, candidates_wanted(limit), excluded=excluded,
                                      conversations=None if query.conversation_id is None
                                      else [query.conversation_id])
            found: dict[int, tuple[str, int, int]] = {}
            blobs: list[tuple[int, bytes]] = []
            for chunk in chunks(picked):
                for row_id, target_id, conversation_id, created_at, vector in conn.execute(
                        f"SELECT v.row_id, v.{column}, o.conversation_id, o.created_at, v.vector FROM {table} v "
                        f"JOIN {owner} o ON o.{column} = v.{column} WHERE v.row_id IN ({marks(chunk)})", chunk):
                    found[row_id] = (str(target_id), conversation_id, created_at)
                    blobs.append((row_id, vector))
        if picked and len(found) < len(picked) // 2:  # mostly deleted since loaded: start again
            index.reset()
        return [SearchHit(query.target, found[r][0], found[r][1], "", score, from_us(found[r][2]))
                for r, score in cosine(query.vector, blobs, limit)]

    @staticmethod
    def _load(conn: sqlite3.Connection, index: VectorIndex, target: SearchTarget) -> None:
        """The rows added since ``index.last`` (all of them after a reset)."""
        table, column, owner = TABLES[target]
        cursor = conn.execute(f"SELECT v.row_id, o.conversation_id, v.vector FROM {table} v JOIN {owner} o "
                              f"ON o.{column} = v.{column} WHERE v.row_id > ? ORDER BY v.row_id", (index.last,))
        while rows := cursor.fetchmany(LOAD_CHUNK):
            index.add(rows)
