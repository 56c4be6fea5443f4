"""Prompt-time recall: the few memories and summary snippets most relevant to a prompt, under a token cap.

SessionStart restore ranks the same way, against the user turns that ended the project's newest
conversation (``recent_topic``), then fills its ``memory.restore_count`` places by confidence.

Relevance is ``lcm search``'s (``recall.search.relevant``): the prompt (its first ``MAX_QUERY_CHARS``) is
searched in the ``RANKED`` mode (any phrase, stemmed, stop words ignored) and a hit's score is divided by the
best score the query can reach (``best_score``), so a memory sharing one of three content words with the
prompt scores about 0.3 and one sharing none is not a candidate at all. As in ``lcm search``, a summary
matching fewer phrases than the best message is no candidate (a message says it better, and messages are
not injected); summaries the session already has in context are left out. Equal relevance goes to the more
confident memory. Only items scoring at least ``memory.recall_min_score`` are injected, best first, until
``memory.recall_max_tokens``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..recall.search import best_score, relevant
from ..recall.semantic import similar_memories
from ..storage.models import ContextItemKind, Role, SearchTarget
from ..transcripts.format_helpers import LCM_CONTEXT_HEADER
from .text import content_words

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from .scope import MemoryScope

IDENTIFIER_WEIGHT = 2.0
MEMORY_SIMILARITY = 0.3
"""Cosine similarity a memory needs to count by meaning (semantic lane): 0.38 for "how do we deploy this service
to production?" against the blue-green deploy memory, at most 0.22 for unrelated prompts (``./dev bench recall``)."""
SUMMARY_HITS = 8
SNIPPET_CHARS = 360
MAX_ITEMS = 6
MAX_QUERY_CHARS = 500
TOPIC_MESSAGES = 20
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
    """Shared content words, identifiers counted double, over the smaller set's weight: which lines of a
    summary to show (``snippet``), not what to inject."""
    if not prompt or not words:
        return 0.0
    smaller = min(sum(weight(w) for w in prompt), sum(weight(w) for w in words))
    return sum(weight(w) for w in prompt & words) / smaller


def memory_hints(scope: MemoryScope, query: str) -> list[Hint]:
    """The scope's memories relevant to ``query``: by the lexical relevance, and with the semantic lane on
    (``scope.embedder``) by cosine similarity too, when it reaches ``MEMORY_SIMILARITY`` (the higher counts)."""
    hints: dict[str, Hint] = {}
    for hit in relevant(scope.storage, query, SearchTarget.MEMORY, SUMMARY_HITS):
        memory = scope.storage.promoted_memory.get_memory(int(hit.id))
        if memory is not None and not memory.archived:
            ref = scope.ref(memory.memory_id)
            hints[ref] = Hint(ref, "memory", round(hit.score, 4), memory.content, memory.confidence)
    if scope.embedder is not None:
        for memory, similarity in similar_memories(scope.storage, scope.embedder, query)[:SUMMARY_HITS]:
            ref = scope.ref(memory.memory_id)
            if similarity >= MEMORY_SIMILARITY and similarity > (hints[ref].score if ref in hints else 0.0):
                hints[ref] = Hint(ref, "memory", round(similarity, 4), memory.content, memory.confidence)
    return list(hints.values())


def summary_hints(storage: ProjectStorage, query: str, prompt: frozenset[str], *,
                  session_id: str | None) -> list[Hint]:
    found = relevant(storage, query, SearchTarget.SUMMARIES, SUMMARY_HITS)
    if not found:
        return []
    best_message = max((math.floor(h.score * best_score(query) + 1e-9)
                        for h in relevant(storage, query, SearchTarget.MESSAGES, 1)), default=-1)
    seen = _in_context(storage, session_id)
    hints: dict[str, Hint] = {}
    for hit in found:
        if hit.id in seen or hit.id in hints or math.floor(hit.score * best_score(query) + 1e-9) < best_message:
            continue
        summary = storage.summaries.get_summary(hit.id)
        if summary is not None:
            hints[hit.id] = Hint(hit.id, "summary", round(hit.score, 4), snippet(summary.content, prompt))
    return list(hints.values())


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
    for hint in sorted(hints, key=lambda h: (-h.score, -(h.confidence or 0.0), h.id)):
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
    """The memories of both scopes for a session's start (``count`` in all): those relevant to what the
    project's newest conversation was about (``recent_topic``, ranked as prompt-time recall ranks), most
    relevant first, then the highest-confidence others."""
    scopes = [s for s in (project, user) if s is not None]
    topic = recent_topic(project.storage) if not project.user_wide else ""
    relevant = [h for s in scopes for h in memory_hints(s, topic)] if topic else []
    chosen = sorted(relevant, key=lambda h: (-h.score, -(h.confidence or 0.0), h.id))[:count]
    taken = {h.id for h in chosen}
    others = sorted((h for s in scopes for h in top_memories(s, count) if h.id not in taken),
                    key=lambda h: (-h.score, h.id))
    return [*chosen, *others][:count]


def recent_topic(storage: ProjectStorage) -> str:
    """The user turns among the last ``TOPIC_MESSAGES`` messages of the project's newest conversation, joined
    (at most ``MAX_QUERY_CHARS``): what a session starting now most likely continues."""
    conversations = storage.conversations.list_conversations()
    if not conversations:
        return ""
    newest = conversations[-1].conversation_id
    after = storage.conversations.message_count(newest) - TOPIC_MESSAGES - 1
    recent = storage.conversations.list_messages(newest, after_seq=after if after >= 0 else None)
    said = [m.content for m in recent[-TOPIC_MESSAGES:] if m.role is Role.USER]
    return " ".join(said)[-MAX_QUERY_CHARS:]


def query_words(prompt: str) -> frozenset[str]:
    return content_words(prompt[:MAX_QUERY_CHARS * 4])


def for_prompt(project: MemoryScope, user: MemoryScope | None, prompt: str, *, session_id: str | None,
               min_score: float, max_tokens: int) -> dict[str, object]:
    """What to inject for ``prompt`` (``context`` is empty when nothing is relevant enough); records each
    surfacing in the scope that holds it, without a query: the prompt is never stored."""
    from .store import record_surfacing

    query = prompt[:MAX_QUERY_CHARS]
    candidates = memory_hints(project, query) + summary_hints(project.storage, query, query_words(prompt),
                                                               session_id=session_id)
    if user is not None:
        candidates += memory_hints(user, query)
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
