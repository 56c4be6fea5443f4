"""Lexical search over messages, summaries and memories.

* full text: the query's phrases (``query_chunks``: stop words dropped) as
  ``phraseto_tsquery('english', ...)`` against a stored ``english`` tsvector
  (stemmed), all of them (``FULL_TEXT``, ranked with ``ts_rank``) or any of
  them (``RANKED``: phrases matched, whole-query phrase, cover density; a
  word the planner's statistics find in most rows counts but does not rank,
  ``_common``);
* substring: ``LIKE`` (case-sensitive) served by the pg_trgm GIN index;
* regex: the server's ``~`` operator (POSIX ARE).

Hits are ordered by score, then newest, then id; archived memories are not searched.

PostgreSQL drops words longer than its lexeme limit from tsvectors. The
content itself is always stored whole, and a full-text query word beyond
that limit is matched through the trigram path instead, so such tokens are
still found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lcm_framework.plugin_api.storage import (
    COMMON_MIN,
    COMMON_SHARE,
    Phrase,
    SearchHit,
    SearchMode,
    SearchQuery,
    SearchTarget,
    effective_limit,
    query_phrases,
)

from .base import Repository, utc, utc_required

LEXEME_LIMIT_BYTES = 2046
SNIPPET_CHARS = 160


@dataclass(frozen=True, slots=True)
class _Source:
    table: str
    id_expr: str
    conversation_expr: str
    order_id: str
    visible: str = "true"


_SOURCES = {
    SearchTarget.MESSAGES: _Source("messages", "message_id::text", "conversation_id", "message_id"),
    SearchTarget.SUMMARIES: _Source("summaries", "summary_id", "conversation_id", "summary_id"),
    SearchTarget.MEMORY: _Source("memories", "memory_id::text", "NULL::bigint", "memory_id", "NOT archived"),
}


def like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def split_long_tokens(text: str) -> tuple[str, list[str]]:
    """(query text for the tsquery, whitespace chunks too long to be lexemes)."""
    long = [w for w in text.split() if len(w.encode("utf-8")) > LEXEME_LIMIT_BYTES]
    rest = " ".join(w for w in text.split() if len(w.encode("utf-8")) <= LEXEME_LIMIT_BYTES)
    return rest, long


def snippet(content: str, needle: str | None) -> str:
    """About SNIPPET_CHARS characters of ``content`` around the first case-insensitive hit of ``needle``."""
    if len(content) <= SNIPPET_CHARS:
        return content
    at = content.lower().find(needle.lower()) if needle else -1
    start = max(0, at - SNIPPET_CHARS // 4) if at >= 0 else 0
    end = min(len(content), start + SNIPPET_CHARS)
    return ("…" if start else "") + content[start:end] + ("…" if end < len(content) else "")


class PgSearch(Repository):
    domain = "lexical_search"

    def search(self, query: SearchQuery) -> list[SearchHit]:
        mode, target = SearchMode(query.mode), SearchTarget(query.target)
        bound = effective_limit(query.limit)
        if bound == 0 or not query.text.strip():
            return []
        source = _SOURCES[target]
        where = ["project_id = %(project)s", source.visible]
        args: dict[str, Any] = {"project": self._project, "limit": bound, "since": utc(query.since),
                                "conversation": query.conversation_id}
        if query.since is not None:
            where.append("created_at >= %(since)s")
        if query.conversation_id is not None:
            where.append(f"{source.conversation_expr} = %(conversation)s")
        if not query.include_subagents and target is not SearchTarget.MEMORY:
            where.append("conversation_id NOT IN (SELECT child_conversation_id FROM subagent_links "
                         "WHERE project_id = %(project)s)")
        score = "1.0::float8"
        needle: str | None = query.text.split()[0]
        if mode is SearchMode.RANKED:
            rest, long = split_long_tokens(query.text)
            phrases = query_phrases(rest)
            if not phrases and not long:
                return []
            needle = phrases[0].words[0] if phrases else long[0]
            return self._ranked(target, source, where, args, phrases, long, needle, bound)
        if mode is SearchMode.FULL_TEXT:
            rest, long = split_long_tokens(query.text)
            phrases = query_phrases(rest)
            if not phrases and not long:
                return []
            condition, score = _text_plan(phrases, long, args)
            where.append(condition)
            needle = phrases[0].words[0] if phrases else long[0]
        elif mode is SearchMode.SUBSTRING:
            args["pattern"] = like_pattern(query.text)
            where.append("content LIKE %(pattern)s")  # case-sensitive, as the contract says
            needle = query.text
        else:
            args["regex"] = query.text
            where.append("content ~ %(regex)s")
            needle = None
        sql = (f"SELECT {source.id_expr}, {source.conversation_expr}, content, {score} AS score, created_at "
               f"FROM {source.table} WHERE {' AND '.join(where)} "
               f"ORDER BY score DESC, created_at DESC, {source.table}.{source.order_id} LIMIT %(limit)s")
        with self._cursor() as cur:
            cur.execute(sql, args)
            rows = cur.fetchall()
        if mode is SearchMode.REGEX:
            return [self._hit(target, r, _regex_needle(query.text, r[2])) for r in rows]
        return [self._hit(target, r, needle) for r in rows]

    def _ranked(self, target: SearchTarget, source: _Source, where: list[str], args: dict[str, Any],
                phrases: list[Phrase], long: list[str], needle: str, bound: int | None) -> list[SearchHit]:
        """RANKED: rows matching a selective phrase, best first; the places they leave go to the newest rows
        that only common phrases (``_common``) match, scored by the phrases matched alone."""
        head = f"SELECT {source.id_expr}, {source.conversation_expr}, content, "
        order = f"{source.table}.{source.order_id}"
        tail = f" AS score, created_at, {order} FROM {source.table} WHERE {' AND '.join(where)} AND "
        with self._cursor() as cur:
            common = _common(cur, source.table, phrases)
            selective, fill, score = _ranked_plan(phrases, long, common, args)
            rows = []
            if selective:
                cur.execute(f"{head}{score}{tail}{selective} ORDER BY score DESC, created_at DESC, {order} "
                            "LIMIT %(limit)s", args)
                rows = cur.fetchall()
            if fill and (bound is None or len(rows) < bound):
                args["rest"] = None if bound is None else bound - len(rows)
                cur.execute(f"{head}{_matched(phrases, long, args)}{tail}{fill} ORDER BY created_at DESC, "
                            f"{order} LIMIT %(rest)s", args)
                rows += cur.fetchall()
        rows.sort(key=lambda r: (-r[3], -r[4].timestamp(), r[5]))
        return [self._hit(target, r, needle) for r in rows[:bound]]

    def _hit(self, target: SearchTarget, r: Any, needle: str | None) -> SearchHit:
        return SearchHit(target, r[0], None if r[1] is None else self._int(r[1]), snippet(r[2], needle),
                         float(r[3]), utc_required(r[4]))


def _phrase_sql(chunks: list[Phrase], long: list[str], args: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The tsquery of each chunk (``phraseto_tsquery``, stemmed by the ``english`` configuration) and the ILIKE
    test of each chunk too long to be a lexeme; fills ``args``."""
    for n, chunk in enumerate(chunks):
        args[f"c{n}"] = chunk.text
    for n, token in enumerate(long):
        args[f"long{n}"] = like_pattern(token)
    return ([f"phraseto_tsquery('english', %(c{n})s)" for n in range(len(chunks))],
            [f"content ILIKE %(long{n})s" for n in range(len(long))])


def _text_plan(chunks: list[Phrase], long: list[str], args: dict[str, Any]) -> tuple[str, str]:
    """WHERE condition and score (``ts_rank``) of a FULL_TEXT query: every phrase; fills ``args``."""
    phrases, likes = _phrase_sql(chunks, long, args)
    tests = ([f"content_tsv @@ ({' && '.join(phrases)})"] if phrases else []) + likes
    score = f"ts_rank(content_tsv, {' && '.join(phrases)})::float8" if phrases else "1.0::float8"
    return " AND ".join(tests), score


def _matched(chunks: list[Phrase], long: list[str], args: dict[str, Any]) -> str:
    """RANKED's integer part: phrases matched (1 each), plus 0.5 when the query's words form one phrase."""
    phrases, likes = _phrase_sql(chunks, long, args)
    matched = [f"(content_tsv @@ {p})::int" for p in phrases] + [f"({like})::int" for like in likes]
    if len(chunks) > 1:
        args["whole"] = " ".join(word for chunk in chunks for word in chunk.words)
        matched.append("0.5 * (content_tsv @@ phraseto_tsquery('english', %(whole)s))::int")
    return f"({' + '.join(matched)})::float8"


def _ranked_plan(chunks: list[Phrase], long: list[str], common: set[int],
                 args: dict[str, Any]) -> tuple[str | None, str | None, str]:
    """RANKED: the condition of rows matching a selective phrase (None: all are common), the condition of
    rows only common phrases match (None: none is), and the score of the first: phrases matched, then
    cover density over the selective phrases in [0, 0.4), as SQLite adds bm25."""
    phrases, likes = _phrase_sql(chunks, long, args)
    rare = [p for n, p in enumerate(phrases) if n not in common]
    frequent = [p for n, p in enumerate(phrases) if n in common]
    rare_any = f"({' || '.join(rare)})" if rare else None
    tests = ([f"content_tsv @@ {rare_any}"] if rare_any else []) + likes
    selective = f"({' OR '.join(tests)})" if tests else None
    fill = None
    if frequent:
        fill = f"content_tsv @@ ({' || '.join(frequent)})" + (f" AND NOT {selective}" if selective else "")
    density = f"ts_rank_cd(content_tsv, {rare_any})" if rare_any else "0"
    return selective, fill, f"({_matched(chunks, long, args)} + 0.4 * {density} / (1.0 + {density}))::float8"


def _common(cur: Any, table: str, chunks: list[Phrase]) -> set[int]:
    """Indexes of the one-lexeme chunks that are stop words of this corpus: in more than one in COMMON_SHARE
    rows of ``table`` and more than COMMON_MIN of them, by the planner's statistics (``ANALYZE``: all
    projects of the schema; none yet, none common)."""
    if not chunks:
        return set()
    cur.execute("SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples, "
                "ARRAY(SELECT array_to_string(tsvector_to_array(to_tsvector('english', u.chunk)), ' ') "
                "      FROM unnest(%(chunks)s::text[]) WITH ORDINALITY AS u(chunk, ord) ORDER BY u.ord) "
                "FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename "
                "AND c.relnamespace = to_regnamespace(current_schema()) "
                "WHERE s.schemaname = current_schema() AND s.tablename = %(table)s AND s.attname = 'content_tsv'",
                {"chunks": [chunk.text for chunk in chunks], "table": table})
    row = cur.fetchone()
    if row is None or not row[0]:
        return set()
    elements, freqs, rows, lexemes = row
    share = dict(zip(elements, freqs, strict=False))  # the last three frequencies are min, max and nulls
    return {n for n, lexeme in enumerate(lexemes)
            if lexeme and " " not in lexeme and share.get(lexeme, 0.0) * COMMON_SHARE > 1
            and share.get(lexeme, 0.0) * rows > COMMON_MIN}


def _regex_needle(pattern: str, content: str) -> str | None:
    """The first match of ``pattern`` in ``content`` (linear-time re2) when it accepts the pattern, else None."""
    import re2

    try:
        options = re2.Options()
        options.log_errors = False  # never RE2's log of the refused pattern on stderr
        found = re2.search(pattern, content, options)
    except Exception:  # re2 refuses the pattern: snippet from the start
        return None
    return found.group(0) if found else None
