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
import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lcm_framework.plugin_api import UnsupportedCapabilityError
from lcm_framework.plugin_api.storage import (
    COMMON_MIN,
    COMMON_SHARE,
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
from .scope import Repository
from .statements import chunks, marks

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

    options = re2.Options()
    options.log_errors = False  # an invalid pattern is the caller's typed error, never RE2's log on stderr
    return re2.compile(pattern, options)


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


@dataclass(frozen=True, slots=True)
class _Select:
    """One query's FROM/WHERE and filters, run with a score expression and MATCH argument of the caller's."""

    spec: _Target
    condition: str
    filters: str
    filter_args: list[Any]

    def rows(self, conn: sqlite3.Connection, score: str, where_args: list[Any], docid: str, cutoff: int | None,
             limit: int, *, newest: bool = False) -> list[Any]:
        """(id, conversation, created_at, score, rowid) rows, best score (or, ``newest``, newest row) first."""
        spec = self.spec
        sql = (f"SELECT t.{spec.id_column}, {spec.conversation}, t.created_at, {score} AS score, t.{spec.rowid} "
               f"FROM {self.condition} {self.filters}")
        args = [*where_args, *self.filter_args]
        if cutoff is not None:
            sql += f" AND {spec.index}.{docid} >= ?"
            args.append(cutoff)
        order = f"{spec.index}.{docid} DESC" if newest else "score DESC, t.created_at DESC"
        return conn.execute(f"{sql} ORDER BY {order}, t.{spec.id_column} ASC LIMIT ?", [*args, limit]).fetchall()


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
        filters, filter_args = spec.extra, []
        if query.conversation_id is not None and target is not SearchTarget.MEMORY:
            filters += " AND t.conversation_id = ?"
            filter_args.append(query.conversation_id)
        if query.since is not None:
            filters += " AND t.created_at >= ?"
            filter_args.append(to_us(query.since))
        if not query.include_subagents and target is not SearchTarget.MEMORY:
            filters += " AND t.conversation_id NOT IN (SELECT child_conversation_id FROM subagent_links)"
        capped = (mode is not SearchMode.SUBSTRING and mode is not SearchMode.REGEX and fts_tier
                  and query.conversation_id is None and query.since is None)
        select = _Select(spec, condition, filters, filter_args)
        with self._op() as conn:
            cutoff = self._candidate_cutoff(conn, spec, where_args[0]) if capped else None
            if mode is SearchMode.RANKED and fts_tier:
                rows = self._ranked(conn, select, score, query_chunks(query.text), cutoff, bound)
            else:
                rows = select.rows(conn, score, [*score_args, *where_args], self._docid(), cutoff,
                                   self._sql_limit(bound))
            contents = self._contents(conn, spec, [row[0] for row in rows])
        return [
            SearchHit(target, str(row[0]), row[1], snippet(contents[row[0]], *locate(contents[row[0]])),
                      float(row[3]), from_us(row[2]))
            for row in rows
        ]

    def _ranked(self, conn: sqlite3.Connection, select: _Select, score: str, groups: list[list[str]],
                cutoff: int | None, bound: int | None) -> list[Any]:
        """RANKED on an FTS tier: candidates, then each scored by ``_rescored``.

        The candidates are the best ``RESCORED`` (or ``bound``) rows by bm25 over the query's selective
        phrases; a common phrase (``_common``) only adds its point to the rows it matches, unless the
        selective phrases leave places free: those go to the newest rows matching common phrases, with no
        relevance fraction. So a frequent word never costs a full scan of its matches (bm25 reads a phrase's
        whole posting list for its weight) nor the scoring of every row it matches.
        """
        docid = self._docid()
        phrases = [fts.match_expression([group]) for group in groups]
        common = self._common(conn, select.spec, phrases, cutoff)
        selective = [g for g, phrase in zip(groups, phrases, strict=True) if phrase not in common]
        wanted = self._sql_limit(max(bound, RESCORED) if bound is not None else bound)
        rows = select.rows(conn, score, [fts.any_of(selective)], docid, cutoff, wanted) if selective else []
        if common and (bound is None or len(rows) < bound):
            more = select.rows(conn, "0.0", [fts.any_of([g for g in groups if g not in selective])], docid, cutoff,
                               self._sql_limit(None if bound is None else bound + len(rows)), newest=True)
            seen = {row[4] for row in rows}
            rows += [row for row in more if row[4] not in seen][:None if bound is None else bound - len(rows)]
        return self._rescored(conn, select.spec, groups, rows)[:bound]

    def _common(self, conn: sqlite3.Connection, spec: _Target, phrases: list[str], cutoff: int | None) -> set[str]:
        """The phrases that are stop words of this corpus: matching more than COMMON_MIN rows and more than one
        in COMMON_SHARE of the rows searched (those from ``cutoff``, else all). Counting stops past that."""
        index, docid = spec.index, self._docid()
        base = spec.index_of or spec.table  # the stored table, not a view that rebuilds text
        low, high = conn.execute(f"SELECT (SELECT min({spec.rowid}) FROM {base}), "
                                 f"(SELECT max({spec.rowid}) FROM {base})").fetchone()
        if high is None:
            return set()
        threshold = max(COMMON_MIN, (high - (low if cutoff is None else cutoff) + 1) // COMMON_SHARE)
        common = set()
        for phrase in dict.fromkeys(phrases):
            count = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ? "
                                 f"AND {docid} >= ? LIMIT ?)", (phrase, cutoff or low, threshold + 1)).fetchone()[0]
            if count > threshold:
                common.add(phrase)
        return common

    def _rescored(self, conn: sqlite3.Connection, spec: _Target, groups: list[list[str]],
                  rows: list[Any]) -> list[Any]:
        """RANKED: the candidates scored by query phrases matched (1 each), the whole query as one phrase
        (0.5), then bm25 in [0, 0.4); so the integer part counts the phrases matched on every backend."""
        index, docid = spec.index, self._docid()
        phrases = [fts.match_expression([group]) for group in groups]
        if len(groups) > 1:
            phrases.append(fts.match_expression([[w for group in groups for w in group]]))
        points: dict[Any, float] = {row[4]: 0.0 for row in rows}
        if not points:
            return []
        # one scan of the candidates' rowid range per phrase (FTS seeks ranges, not lists), filtered by SQLite
        low, high, members = min(points), max(points), json.dumps(list(points))
        for n, phrase in enumerate(phrases):
            found = conn.execute(f"SELECT {docid} FROM {index} WHERE {index} MATCH ? AND {docid} >= ? "
                                 f"AND {docid} <= ? AND +{docid} IN (SELECT value FROM json_each(?))",
                                 (phrase, low, high, members)).fetchall()
            for (rowid,) in found:
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
            source = f"{index} JOIN {spec.table} t ON t.{spec.rowid} = {index}.{docid} WHERE {index} MATCH ?"
            expression = fts.any_of(groups) if ranked else fts.match_expression(groups)  # RANKED: see ``_ranked``
            base = f"-bm25({index})" if tier is FullTextTier.FTS5 else f"-rank_bm25(matchinfo({index}, 'pcnalx'))"
            return source, [expression], base, [], locate_words
        likes = (" OR " if ranked else " AND ").join("t.content LIKE ? ESCAPE '\\'" for _ in words)
        occurrences = "(length(t.content) - length(replace(lower(t.content), ?, ''))) / length(?)"
        # RANKED: words present first, occurrences only break ties
        per_word = f"(instr(lower(t.content), ?) > 0) + min({occurrences}, 999) / 1000.0" if ranked else occurrences
        score_args = [w.lower() for w in words for _ in range(3 if ranked else 2)]
        return (f"{spec.table} t WHERE ({likes})", [fts.like_pattern(w) for w in words],
                f"({' + '.join(per_word for _ in words)})", score_args, locate_words)
