"""The semantic lane's vectors: a ``bytea`` per message and summary, scanned with NumPy (``VectorIndex``).

pgvector is not required (LCM never creates extensions): each process keeps one ``VectorIndex`` per project
and target (the sign bits of its vectors), brought up to date from the rows added since before each scan;
the best candidates are ranked exactly by cosine over their stored bytes, read back by row number.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.embedding import VectorIndex, candidates_wanted, cosine
from lcm_framework.plugin_api.storage import (
    SearchHit,
    SearchTarget,
    StoredVector,
    VectorCount,
    VectorQuery,
    VectorSpace,
)

from .base import Repository, utc_required

# target -> (vector table, id column, the table it belongs to, its creation order)
TABLES = {SearchTarget.MESSAGES: ("message_vectors", "message_id", "messages", "message_id"),
          SearchTarget.SUMMARIES: ("summary_vectors", "summary_id", "summaries", "created_at, summary_id")}
LOAD_CHUNK = 20_000

_INDEXES: weakref.WeakKeyDictionary[Any, dict[tuple[str, SearchTarget], VectorIndex]] = \
    weakref.WeakKeyDictionary()


class PgVectors(Repository):
    domain = "vectors"

    def space(self) -> VectorSpace | None:
        with self._cursor() as cur:
            cur.execute("SELECT embedder, dimensions FROM vector_spaces WHERE project_id = %s", (self._project,))
            row = cur.fetchone()
        return None if row is None else VectorSpace(row[0], row[1])

    def set_space(self, space: VectorSpace) -> bool:
        with self._cursor() as cur:
            cur.execute("SELECT embedder, dimensions FROM vector_spaces WHERE project_id = %s FOR UPDATE",
                        (self._project,))
            row = cur.fetchone()
            if row is not None and (row[0], row[1]) == (space.embedder, space.dimensions):
                return False
            dropped = row is not None
            if dropped:
                for table, *_ in TABLES.values():
                    cur.execute(f"DELETE FROM {table} WHERE project_id = %s", (self._project,))
            cur.execute("INSERT INTO vector_spaces (project_id, embedder, dimensions) VALUES (%s, %s, %s) "
                        "ON CONFLICT (project_id) DO UPDATE SET embedder = excluded.embedder, "
                        "dimensions = excluded.dimensions", (self._project, space.embedder, space.dimensions))
        if dropped:
            for target in TABLES:
                self._indexes().pop((self._project, target), None)
        return dropped

    def put(self, vectors: Sequence[StoredVector]) -> int:
        added = 0
        with self._cursor() as cur:
            cur.execute("SELECT dimensions FROM vector_spaces WHERE project_id = %s", (self._project,))
            row = cur.fetchone()
            if row is None:
                raise self._conflict("no vector space is recorded: set_space first", "no_vector_space")
            for v in vectors:
                if len(v.vector) != row[0]:
                    raise self._invalid(f"a vector of {len(v.vector)} bytes in a space of {row[0]} dimensions",
                                        "invalid_vector")
            for target, (table, column, owner, _) in TABLES.items():
                ids = [int(v.target_id) if target is SearchTarget.MESSAGES else v.target_id
                       for v in vectors if v.target is target]
                if not ids:
                    continue
                blobs = [v.vector for v in vectors if v.target is target]
                cur.execute(
                    f"INSERT INTO {table} (project_id, {column}, vector) SELECT %s, n.id, n.vector "
                    f"FROM unnest(%s::{'bigint' if target is SearchTarget.MESSAGES else 'text'}[], %s::bytea[]) "
                    f"AS n(id, vector) WHERE EXISTS (SELECT 1 FROM {owner} o WHERE o.project_id = %s "
                    f"AND o.{column} = n.id) ON CONFLICT DO NOTHING",
                    (self._project, ids, blobs, self._project))
                added += cur.rowcount
        return added

    def unembedded(self, target: SearchTarget, *, after: str | None = None, limit: int) -> list[str]:
        table, column, owner, order = TABLES[target]
        key = ", ".join(f"o.{c.strip()}" for c in order.split(","))
        where = ""
        args: list[Any] = [self._project]
        if after is not None:
            if target is SearchTarget.MESSAGES and not after.isdigit():
                return []
            where = (f" AND ({key}) > (SELECT {order} FROM {owner} WHERE project_id = %s AND {column} = %s)")
            args += [self._project, int(after) if target is SearchTarget.MESSAGES else after]
        with self._cursor() as cur:
            cur.execute(f"SELECT o.{column} FROM {owner} o WHERE o.project_id = %s{where} AND NOT EXISTS "
                        f"(SELECT 1 FROM {table} v WHERE v.project_id = o.project_id AND v.{column} = o.{column}) "
                        f"ORDER BY {key} LIMIT %s", (*args, limit))
            return [str(r[0]) for r in cur.fetchall()]

    def counts(self) -> dict[SearchTarget, VectorCount]:
        out = {}
        with self._cursor() as cur:
            for target, (table, _, owner, _) in TABLES.items():
                cur.execute(f"SELECT (SELECT count(*) FROM {table} WHERE project_id = %(p)s), "
                            f"(SELECT count(*) FROM {owner} WHERE project_id = %(p)s)", {"p": self._project})
                embedded, stored = cur.fetchone()
                newest = None
                if target is SearchTarget.MESSAGES:
                    cur.execute("SELECT max(message_id) FROM message_vectors WHERE project_id = %s",
                                (self._project,))
                    top = cur.fetchone()[0]
                    newest = None if top is None else str(top)
                out[target] = VectorCount(self._int(embedded), self._int(stored), newest)
        return out

    def nearest(self, query: VectorQuery) -> list[SearchHit]:
        table, column, owner, _ = TABLES[query.target]
        index = self._indexes().setdefault((self._project, query.target), VectorIndex())
        limit = query.limit if query.limit is not None and query.limit >= 0 else 1_000_000
        with self._cursor() as cur:
            cur.execute(f"SELECT v.row_id, o.conversation_id, v.vector FROM {table} v JOIN {owner} o "
                        f"ON o.project_id = v.project_id AND o.{column} = v.{column} "
                        f"WHERE v.project_id = %s AND v.row_id > %s ORDER BY v.row_id", (self._project, index.last))
            while rows := cur.fetchmany(LOAD_CHUNK):
                index.add([(r[0], r[1], bytes(r[2])) for r in rows])
            excluded: list[int] = []
            if not query.include_subagents:
                cur.execute("SELECT child_conversation_id FROM subagent_links WHERE project_id = %s",
                            (self._project,))
                excluded = [r[0] for r in cur.fetchall()]
            picked = index.candidates(query.vector, candidates_wanted(limit), excluded=excluded,
                                      conversations=None if query.conversation_id is None
                                      else [query.conversation_id])
            cur.execute(f"SELECT v.row_id, v.{column}, o.conversation_id, o.created_at, v.vector FROM {table} v "
                        f"JOIN {owner} o ON o.project_id = v.project_id AND o.{column} = v.{column} "
                        f"WHERE v.project_id = %s AND v.row_id = ANY(%s)", (self._project, picked))
            rows = cur.fetchall()
            found = {r[0]: (str(r[1]), r[2], r[3]) for r in rows}
            blobs = [(r[0], bytes(r[4])) for r in rows]
        if picked and len(found) < len(picked) // 2:  # mostly deleted since loaded: start again
            index.reset()
        return [SearchHit(query.target, found[r][0], found[r][1], "", score, utc_required(found[r][2]))
                for r, score in cosine(query.vector, blobs, limit)]

    def _indexes(self) -> dict[tuple[str, SearchTarget], VectorIndex]:
        runtime = getattr(self._ex, "runtime", None)
        if runtime is None:  # a transaction's repositories: an index of their own
            return self.__dict__.setdefault("_own", {})
        return _INDEXES.setdefault(runtime, {})
