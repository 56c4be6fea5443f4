"""Prompt-time recall: the few memories and summary snippets most relevant to a prompt, under a token cap.

Relevance of a text to the prompt (0..1): the shared content words (``text.content_words``), each weighted
``IDENTIFIER_WEIGHT`` when it looks like an identifier, path or number (has a digit, ``_``, ``/`` or ``.``)
and 1 otherwise, divided by ``small + SPREAD * (large - small)`` where small and large are the weights of
the two word sets (a short prompt fully inside a long summary is not a perfect match). A memory's score is its
relevance times ``0.6 + 0.4 * confidence``; a summary's its relevance times ``SUMMARY_FACTOR``. Only items
scoring at least ``memory.recall_min_score`` are injected, best first, until ``memory.recall_max_tokens``.
Summaries are found with one ``RANKED`` search (any word, stemmed, best first) of the prompt's keywords (at
most ``MAX_KEYWORDS``); summaries the session already has in context are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UnsupportedCapabilityError
from ..storage.models import ContextItemKind, SearchHit, SearchMode, SearchQuery, SearchTarget
from ..transcripts.format_helpers import LCM_CONTEXT_HEADER
from .text import content_words

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Memory
    from .scope import MemoryScope

IDENTIFIER_WEIGHT = 2.0
SPREAD = 0.25
SUMMARY_FACTOR = 0.8
MAX_KEYWORDS = 8
SUMMARY_HITS = 8
SNIPPET_CHARS = 360
MAX_ITEMS = 6
MAX_QUERY_CHARS = 500
FEEDBACK_HINT = ("If one of these helped, call lcm_feedback with its id (useful true or false); "
                 "lcm_expand a sum_ id for the full original messages.")
_IDENTIFIER = re.compile(r"[\d_/.]")


@dataclass(frozen=True, slots=True)
class Hint:
    id: str
    kind: str  # "memory" or "summary"
    score: float
    text: str
    confidence: float | None = None

    @property
    def tokens(self) -> int:
        return max(1, len(self.text) // 4) + 12


def weight(word: str) -> float:
    return IDENTIFIER_WEIGHT if _IDENTIFIER.search(word) else 1.0


def relevance(prompt: frozenset[str], words: frozenset[str]) -> float:
    if not prompt or not words:
        return 0.0
    sizes = sorted((sum(weight(w) for w in prompt), sum(weight(w) for w in words)))
    return sum(weight(w) for w in prompt & words) / (sizes[0] + SPREAD * (sizes[1] - sizes[0]))


def memory_hints(scope: MemoryScope, prompt: frozenset[str]) -> list[Hint]:
    return [Hint(scope.ref(m.memory_id), "memory", round(score, 4), m.content, m.confidence)
            for m, score in _scored(scope.storage.promoted_memory.list_memories(), prompt)]


def _scored(memories: Iterable[Memory], prompt: frozenset[str]) -> Iterable[tuple[Memory, float]]:
    for memory in memories:
        yield memory, relevance(prompt, content_words(memory.content)) * (0.6 + 0.4 * memory.confidence)


def keywords(prompt: frozenset[str]) -> list[str]:
    """The prompt words most worth a search: identifiers first, then the longest."""
    return sorted((w for w in prompt if len(w) >= 4 or _IDENTIFIER.search(w)),
                  key=lambda w: (-weight(w), -len(w), w))[:MAX_KEYWORDS]


def summary_hints(storage: ProjectStorage, prompt: frozenset[str], *, session_id: str | None) -> list[Hint]:
    words = keywords(prompt)
    if not words:
        return []
    seen = _in_context(storage, session_id)
    found: dict[str, Hint] = {}
    for hit in _search(storage, " ".join(words)):
        if hit.id in seen or hit.id in found:
            continue
        summary = storage.summaries.get_summary(hit.id)
        if summary is not None:
            score = relevance(prompt, content_words(summary.content)) * SUMMARY_FACTOR
            found[hit.id] = Hint(hit.id, "summary", round(score, 4), snippet(summary.content, prompt))
    return list(found.values())


def _search(storage: ProjectStorage, text: str) -> list[SearchHit]:
    """Summaries matching any of the words (the ranked mode); one substring query per word without it."""
    try:
        return storage.lexical_search.search(SearchQuery(text, SearchMode.RANKED, SearchTarget.SUMMARIES,
                                                         limit=SUMMARY_HITS))
    except UnsupportedCapabilityError:
        return [hit for word in text.split() for hit in storage.lexical_search.search(
            SearchQuery(word, SearchMode.SUBSTRING, SearchTarget.SUMMARIES, limit=SUMMARY_HITS))]


def _in_context(storage: ProjectStorage, session_id: str | None) -> set[str]:
    if not session_id:
        return set()
    found = storage.conversations.find_conversations(session_id)
    if not found:
        return set()
    return {i.summary_id for i in storage.context.list_items(found[-1].conversation_id)
            if i.kind is ContextItemKind.SUMMARY and i.summary_id}


def snippet(content: str, prompt: frozenset[str]) -> str:
    """The summary's lines sharing most words with the prompt, in their order, cut to ``SNIPPET_CHARS``."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    ranked = sorted(range(len(lines)), key=lambda i: (-relevance(prompt, content_words(lines[i])), i))[:2]
    text = " ... ".join(lines[i] for i in sorted(ranked))
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 3] + "..."


def select(hints: Sequence[Hint], *, min_score: float, max_tokens: int) -> list[Hint]:
    chosen: list[Hint] = []
    used = 0
    for hint in sorted(hints, key=lambda h: (-h.score, h.id)):
        if hint.score < min_score or len(chosen) >= MAX_ITEMS:
            break
        if used + hint.tokens > max_tokens:
            continue
        chosen.append(hint)
        used += hint.tokens
    return chosen


def block(hint: Hint) -> str:
    if hint.kind == "memory":
        return f'<memory id="{hint.id}" confidence="{hint.confidence or 0:.2f}">{hint.text}</memory>'
    return f'<summary id="{hint.id}">{hint.text}</summary>'


def render(hints: Sequence[Hint], heading: str) -> str:
    if not hints:
        return ""
    return "\n".join([f"{LCM_CONTEXT_HEADER}: {heading}", FEEDBACK_HINT, *(block(h) for h in hints)])


def session_memories(project: MemoryScope, user: MemoryScope | None, count: int) -> list[Hint]:
    """The highest-confidence memories of both scopes for a session's start (``count`` in all)."""
    found = top_memories(project, count) + (top_memories(user, count) if user is not None else [])
    return sorted(found, key=lambda h: (-h.score, h.id))[:count]


def query_words(prompt: str) -> frozenset[str]:
    return content_words(prompt[:MAX_QUERY_CHARS * 4])


def for_prompt(project: MemoryScope, user: MemoryScope | None, prompt: str, *, session_id: str | None,
               min_score: float, max_tokens: int) -> dict[str, object]:
    """What to inject for ``prompt`` (``context`` is empty when nothing is relevant enough); records each
    surfacing in the scope that holds it, without a query: the prompt is never stored."""
    from .store import record_surfacing

    words = query_words(prompt)
    candidates = memory_hints(project, words) + summary_hints(project.storage, words, session_id=session_id)
    if user is not None:
        candidates += memory_hints(user, words)
    chosen = select(candidates, min_score=min_score, max_tokens=max_tokens)
    user_refs = [h.id for h in chosen if user is not None and h.id.startswith(user.prefix)]
    record_surfacing(project.storage, [h.id for h in chosen if h.id not in user_refs], query=None)
    if user is not None:
        record_surfacing(user.storage, user_refs, query=None)
    return {"items": [{"id": h.id, "kind": h.kind, "score": h.score} for h in chosen],
            "tokens": sum(h.tokens for h in chosen),
            "context": render(chosen, "memory relevant to this prompt")}


def top_memories(scope: MemoryScope, count: int) -> list[Hint]:
    """The scope's ``count`` highest-confidence active memories (newest first among equals)."""
    memories = sorted(scope.storage.promoted_memory.list_memories(), key=lambda m: (-m.confidence, -m.memory_id))
    return [Hint(scope.ref(m.memory_id), "memory", m.confidence, m.content, m.confidence)
            for m in memories[:count]]
