"""Lexical search over messages, summaries and memories.

* full text: the query's phrases (``query_chunks``: stop words dropped) as
  ``phraseto_tsquery('english', ...)`` against a stored ``english`` tsvector
  (stemmed), all of them (``FULL_TEXT``, ranked with ``ts_rank``) or any of
  them (``RANKED``: phrases matched, whole-query phrase, cover density);
* substring: ``ILIKE`` served by the pg_trgm GIN index;
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
        if mode in (SearchMode.FULL_TEXT, SearchMode.RANKED):
            rest, long = split_long_tokens(query.text)
            phrases = query_phrases(rest)
            if not phrases and not long:
                return []
            condition, score = _text_plan(phrases, long, args, ranked=mode is SearchMode.RANKED)
            where.append(condition)
            needle = phrases[0].words[0] if phrases else long[0]
        elif mode is SearchMode.SUBSTRING:
            args["pattern"] = like_pattern(query.text)
            where.append("content ILIKE %(pattern)s")
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

    def _hit(self, target: SearchTarget, r: Any, needle: str | None) -> SearchHit:
        return SearchHit(target, r[0], None if r[1] is None else self._int(r[1]), snippet(r[2], needle),
                         float(r[3]), utc_required(r[4]))


def _text_plan(chunks: list[Phrase], long: list[str], args: dict[str, Any], *, ranked: bool) -> tuple[str, str]:
    """WHERE condition and score of a FULL_TEXT (every phrase) or RANKED (any phrase) query; fills ``args``.

    Each chunk as written is a phrase (``phraseto_tsquery``, stemmed by the ``english`` configuration);
    a chunk too long to be a lexeme is matched with ILIKE. RANKED scores phrases matched (1 each), the
    query's words as one phrase (0.5), then cover density in [0, 1), as SQLite scores bm25.
    """
    phrases = []
    for n, chunk in enumerate(chunks):
        args[f"c{n}"] = chunk.text
        phrases.append(f"phraseto_tsquery('english', %(c{n})s)")
    for n, token in enumerate(long):
        args[f"long{n}"] = like_pattern(token)
    likes = [f"content ILIKE %(long{n})s" for n in range(len(long))]
    if not ranked:
        tests = ([f"content_tsv @@ ({' && '.join(phrases)})"] if phrases else []) + likes
        score = f"ts_rank(content_tsv, {' && '.join(phrases)})::float8" if phrases else "1.0::float8"
        return " AND ".join(tests), score
    any_phrase = f"({' || '.join(phrases)})" if phrases else None
    tests = ([f"content_tsv @@ {any_phrase}"] if any_phrase else []) + likes
    matched = [f"(content_tsv @@ {p})::int" for p in phrases] + [f"({like})::int" for like in likes]
    if len(chunks) > 1:
        args["whole"] = " ".join(word for chunk in chunks for word in chunk.words)
        matched.append("0.5 * (content_tsv @@ phraseto_tsquery('english', %(whole)s))::int")
    density = f"ts_rank_cd(content_tsv, {any_phrase})" if any_phrase else "0"
    return f"({' OR '.join(tests)})", f"({' + '.join(matched)} + 0.4 * {density} / (1.0 + {density}))::float8"


def _regex_needle(pattern: str, content: str) -> str | None:
    """The first match of ``pattern`` in ``content`` (linear-time re2) when it accepts the pattern, else None."""
    import re2

    try:
        found = re2.search(pattern, content)
    except Exception:  # re2 refuses the pattern: snippet from the start
        return None
    return found.group(0) if found else None
