"""Lexical search over messages, summaries and promoted memory.

FULL_TEXT (every query phrase) and RANKED (any phrase, rescored by phrases
matched) use the database's tier (FTS5 bm25 over a porter-stemmed index, FTS4
``rank_bm25`` or a LIKE scan); the query is read by ``query_chunks`` (stop
words dropped). SUBSTRING is a case-sensitive ``instr`` scan, REGEX the
``regexp`` function backed by google-re2 (linear time). Hits are ordered by
score (higher first), then newest, then id. Unfiltered FULL_TEXT and RANKED
queries rank only the newest ``RANK_CANDIDATES`` matches (the contract's bound).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lcm_framework.plugin_api import UnsupportedCapabilityError
from lcm_framework.plugin_api.storage import (
    RANK_CANDIDATES,
    FullTextTier,
    SearchHit,
    SearchMode,
    SearchQuery,
    SearchTarget,
    effective_limit,
    query_chunks,
)

from . import fts
from .clock import from_us, to_us
from .errors import BACKEND
from .scope import Repository, chunks, marks

SNIPPET_CHARS = 200
RESCORED = 200
"""RANKED on an FTS tier rescores this many best bm25 candidates (or the limit, when larger)."""


@dataclass(frozen=True, slots=True)
class _Target:
    table: str
    rowid: str
    id_column: str
    conversation: str
    extra: str = ""
    index_of: str = ""
    """The table whose full-text index this is, when ``table`` is a view of it."""

    @property
    def index(self) -> str:
        return f"{self.index_of or self.table}_fts"


Locator = Callable[[str], tuple[int, int]]
_Plan = tuple[str, list[Any], str, list[Any], Locator]

_TARGETS = {
    SearchTarget.MESSAGES: _Target("message_texts", "message_id", "message_id", "t.conversation_id",
                                       index_of="messages"),
    SearchTarget.SUMMARIES: _Target("summaries", "rowid", "summary_id", "t.conversation_id"),
    SearchTarget.MEMORY: _Target("memories", "memory_id", "memory_id", "NULL", " AND t.archived = 0"),
}


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> Any:
    import re2

    return re2.compile(pattern)


def regexp(pattern: str, value: str | None) -> bool:
    """The SQL ``regexp(pattern, value)`` function (``value REGEXP pattern``)."""
    return value is not None and _compiled(pattern).search(value) is not None


def regex_available() -> bool:
    try:
        import re2  # noqa: F401
    except ImportError:
        return False
    return True


def snippet(content: str, start: int, length: int) -> str:
    """About SNIPPET_CHARS characters of ``content`` around ``start``, marked with … where cut."""
    if len(content) <= SNIPPET_CHARS:
        return content
    begin = max(0, min(start - (SNIPPET_CHARS - length) // 2, len(content) - SNIPPET_CHARS))
    end = begin + SNIPPET_CHARS
    return ("…" if begin else "") + content[begin:end] + ("…" if end < len(content) else "")


class SqliteLexicalSearch(Repository):
    domain = "lexical_search"

    def search(self, query: SearchQuery) -> list[SearchHit]:
        bound = effective_limit(query.limit)
        mode, target = SearchMode(query.mode), SearchTarget(query.target)
        spec = _TARGETS[target]
        plan = self._plan(mode, spec, query.text)
        if bound == 0 or plan is None:
            return []
        condition, where_args, score, score_args, locate = plan
        fts_tier = self._scope.tier is not FullTextTier.LIKE
        rescore = mode is SearchMode.RANKED and fts_tier
        args = [*score_args, *where_args]
        sql = (f"SELECT t.{spec.id_column}, {spec.conversation}, t.created_at, {score} AS score, t.{spec.rowid} "
               f"FROM {condition} {spec.extra}")
        if query.conversation_id is not None and target is not SearchTarget.MEMORY:
            sql += " AND t.conversation_id = ?"
            args.append(query.conversation_id)
        if query.since is not None:
            sql += " AND t.created_at >= ?"
            args.append(to_us(query.since))
        if not query.include_subagents and target is not SearchTarget.MEMORY:
            sql += " AND t.conversation_id NOT IN (SELECT child_conversation_id FROM subagent_links)"
        capped = (mode is not SearchMode.SUBSTRING and mode is not SearchMode.REGEX and fts_tier
                  and query.conversation_id is None and query.since is None)
        with self._op() as conn:
            if capped:
                cutoff = self._candidate_cutoff(conn, spec, where_args[0])
                if cutoff is not None:
                    sql += f" AND {spec.index}.{self._docid()} >= ?"
                    args.append(cutoff)
            sql += f" ORDER BY score DESC, t.created_at DESC, t.{spec.id_column} ASC LIMIT ?"
            args.append(self._sql_limit(max(bound, RESCORED) if rescore and bound is not None else bound))
            rows = conn.execute(sql, args).fetchall()
            if rescore:
                rows = self._rescored(conn, spec, query_chunks(query.text), rows)[:bound]
            contents = self._contents(conn, spec, [row[0] for row in rows])
        return [
            SearchHit(target, str(row[0]), row[1], snippet(contents[row[0]], *locate(contents[row[0]])),
                      float(row[3]), from_us(row[2]))
            for row in rows
        ]

    def _rescored(self, conn: sqlite3.Connection, spec: _Target, groups: list[list[str]],
                  rows: list[Any]) -> list[Any]:
        """RANKED: the best bm25 candidates scored by query phrases matched (1 each), the whole query as one
        phrase (0.5), then bm25 in [0, 0.4); so the integer part counts the phrases matched on every backend."""
        index, docid = spec.index, self._docid()
        phrases = [fts.match_expression([group]) for group in groups]
        if len(groups) > 1:
            phrases.append(fts.match_expression([[w for group in groups for w in group]]))
        points: dict[Any, float] = {row[4]: 0.0 for row in rows}
        if not points:
            return []
        low, high = min(points), max(points)  # one range scan per phrase (FTS seeks rowid ranges, not lists)
        for n, phrase in enumerate(phrases):
            found = conn.execute(f"SELECT {docid} FROM {index} WHERE {index} MATCH ? AND {docid} >= ? "
                                 f"AND {docid} <= ?", (phrase, low, high)).fetchall()
            for (rowid,) in found:
                if rowid in points:
                    points[rowid] += 1.0 if n < len(groups) else 0.5
        scored = [(row[0], row[1], row[2], points[row[4]] + 0.4 * row[3] / (1.0 + row[3]), row[4]) for row in rows]
        return sorted(scored, key=lambda r: (-r[3], -r[2], r[0]))

    def _docid(self) -> str:
        return "rowid" if self._scope.tier is FullTextTier.FTS5 else "docid"

    def _candidate_cutoff(self, conn: sqlite3.Connection, spec: _Target, match: str) -> int | None:
        """Lowest rowid among the newest RANK_CANDIDATES matches, or None when there are fewer."""
        index, docid = spec.index, self._docid()
        row = conn.execute(f"SELECT {docid} FROM {index} WHERE {index} MATCH ? ORDER BY {docid} DESC "
                           "LIMIT 1 OFFSET ?", (match, RANK_CANDIDATES - 1)).fetchone()
        return None if row is None else int(row[0])

    @staticmethod
    def _contents(conn: sqlite3.Connection, spec: _Target, ids: list[Any]) -> dict[Any, str]:
        """Content of the hits, read after ranking so the sort never carries large text."""
        found: dict[Any, str] = {}
        for group in chunks(ids):
            found.update(conn.execute(f"SELECT {spec.id_column}, content FROM {spec.table} "
                                      f"WHERE {spec.id_column} IN ({marks(group)})", group).fetchall())
        return found

    def _plan(self, mode: SearchMode, spec: _Target, text: str) -> _Plan | None:
        """FROM/WHERE clause and its arguments, score expression and its arguments, snippet locator."""
        if mode is SearchMode.REGEX:
            if not self._scope.regex:
                raise UnsupportedCapabilityError("regex search needs google-re2", backend=BACKEND,
                                                 domain=self.domain, project=self._scope.db.project_id,
                                                 code="regex_unsupported")
            try:
                pattern = _compiled(text)
            except Exception:
                raise self._invalid("the regular expression does not compile", "invalid_regex") from None

            def locate_regex(content: str) -> tuple[int, int]:
                found = pattern.search(content)
                return (found.start(), found.end() - found.start()) if found else (0, 0)

            return f"{spec.table} t WHERE t.content REGEXP ?", [text], "1.0", [], locate_regex
        if mode is SearchMode.SUBSTRING:
            if not text:
                return None
            return (f"{spec.table} t WHERE instr(t.content, ?) > 0", [text],
                    "(length(t.content) - length(replace(t.content, ?, ''))) / length(?)", [text, text],
                    lambda content: (max(content.find(text), 0), len(text)))
        groups = query_chunks(text)
        if not groups:
            return None
        words = [w for group in groups for w in group]
        pattern_words = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)),
                                   re.IGNORECASE)

        def locate_words(content: str) -> tuple[int, int]:
            found = pattern_words.search(content)
            return (found.start(), found.end() - found.start()) if found else (0, 0)

        ranked = mode is SearchMode.RANKED
        tier = self._scope.tier
        if tier is not FullTextTier.LIKE:
            index, docid = spec.index, self._docid()
            base = f"-bm25({index})" if tier is FullTextTier.FTS5 else f"-rank_bm25(matchinfo({index}, 'pcnalx'))"
            source = f"{index} JOIN {spec.table} t ON t.{spec.rowid} = {index}.{docid} WHERE {index} MATCH ?"
            if not ranked:
                return source, [fts.match_expression(groups)], base, [], locate_words
            return source, [fts.any_of(groups)], base, [], locate_words  # rescored by ``_rescored``
        likes = (" OR " if ranked else " AND ").join("t.content LIKE ? ESCAPE '\\'" for _ in words)
        occurrences = "(length(t.content) - length(replace(lower(t.content), ?, ''))) / length(?)"
        # RANKED: words present first, occurrences only break ties
        per_word = f"(instr(lower(t.content), ?) > 0) + min({occurrences}, 999) / 1000.0" if ranked else occurrences
        score_args = [w.lower() for w in words for _ in range(3 if ranked else 2)]
        return (f"{spec.table} t WHERE ({likes})", [fts.like_pattern(w) for w in words],
                f"({' + '.join(per_word for _ in words)})", score_args, locate_words)
