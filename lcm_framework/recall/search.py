"""``search``: questions in plain words answered from messages, summaries and promoted memory.

Each target is ranked by the backend (``RANKED``: any query phrase, stemmed, stop words ignored; a
score's integer part counts the phrases matched on every backend, 0.5 more for the whole query as one
phrase, plus a relevance fraction below ``FRACTION`` that compares only within its own index). ``fuse``
makes one list of the three: hits matching more of the query first; hits matching as much take turns,
each list in its own order; a summary matching fewer phrases than the best message is left out. A hit's
relevance (0..1) is the part of the query it matches, plus its place in its group.

Results covering the same turns are merged: a message already shown (as a hit, a neighbouring turn or a
summary's turn), with the same text as one, or whose best sentence is already listed is left out, and so is
a summary heading no new hit whose best sentence quotes one already listed. A
result shows its best-matching sentences (``passages``) within ``RESULT_CHARS``; a message result its
speaker, date and ``context`` turns before and after it (``NEIGHBOUR_CHARS`` each); a summary the span of
the messages it covers and the message hits it covers (``GROUP_HITS``): it heads them. The whole list
stops before ``LIST_CHARS``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..errors import UnsupportedCapabilityError
from ..storage.models import SearchHit, SearchMode, SearchTarget
from ..storage.query_terms import query_phrases
from . import semantic
from .grep import Hit, best_first, lexical, subagent_origins, to_hit
from .passages import best_sentence, passage, query_stems

if TYPE_CHECKING:
    from ..embedding import Embedder
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message

RESULT_CHARS = 200
"""Characters of a result's own text (its best sentences)."""
NEIGHBOUR_CHARS = 90
"""Characters of each neighbouring turn a message result carries (and of each message under a summary)."""
GROUP_HITS = 2
"""Message hits a summary result shows under it (the best of those it covers)."""
GROUP_CHARS = 100
"""Characters of a summary's own text when messages are shown under it."""
LIST_CHARS = 12_000
"""The whole list's text (about 3,000 tokens): results past it are left out."""
CANDIDATES = 4
"""Message hits asked of the backend per result wanted (merging drops some)."""
MIN_CANDIDATES = 40
MAX_PHRASES = 6
FRACTION = 0.4
"""The relevance fraction of a ``RANKED`` score is below this (the storage contract's)."""
KIND_ORDER = {"message": 0, "memory": 1, "summary": 2}
MIN_SIMILARITY = 0.3
"""Cosine similarity a message needs to join the list from the semantic lane (tuned by ``./dev bench recall``)."""
SEMANTIC_WEIGHT = 0.3
"""Weight of the semantic list against the lexical one in their reciprocal-rank fusion (tuned by ``./dev bench
recall``: 1.0 brought the generated dialogues up as much but cost the coding questions two of eleven)."""
RRF_K = 60


@dataclass(frozen=True, slots=True)
class Turn:
    """A neighbouring turn shown with a message result."""

    id: str
    role: str
    created_at: datetime
    text: str


@dataclass(frozen=True, slots=True)
class Ranked:
    """One result. ``hit.score`` is its relevance (0..1); ``hit.snippet`` its best sentences."""

    rank: int
    project_id: str
    hit: Hit
    covered_by: tuple[str, ...]
    role: str | None = None
    """A message's speaker (``user``, ``assistant``, ``tool``...)."""
    span: tuple[datetime, datetime] | None = None
    """A summary's earliest and latest covered message times."""
    context: tuple[Turn, ...] = ()
    hits: tuple[Turn, ...] = ()
    """The message hits a summary covers (the best ``GROUP_HITS``): the summary is their group header."""

    @property
    def chars(self) -> int:
        return len(self.hit.snippet) + sum(len(t.text) for t in (*self.context, *self.hits))


def best_score(query: str) -> float:
    """The score a hit needs for relevance 1: every phrase of ``query`` (at most ``MAX_PHRASES``: a long
    prompt is not a worse match for holding more words), the whole query as one phrase, the full fraction."""
    phrases = min(len(query_phrases(query)), MAX_PHRASES)
    return max(1, phrases) + (0.5 if phrases > 1 else 0.0) + FRACTION


def search(
    storage: ProjectStorage, query: str, *, limit: int = 20, conversation_ids: Sequence[int] | None = None,
    include_subagents: bool = True, context: int = 1, embedder: Embedder | None = None,
) -> list[Ranked]:
    """Best matches first (rank 1 first), at most ``limit``; ``context`` neighbouring turns on each side of
    a message hit. A backend without full text falls back to substring matching. Hits in sub-agent runs
    name the session and tool call that started them. With ``embedder`` (the semantic lane), the message
    list is fused with the messages nearest the query's vector (``with_semantic``) when the project's vectors
    are that embedder's (another one's are ignored until ``lcm embed`` replaces them)."""
    found = {target: _ranked(storage, query, target, _wanted(target, limit), conversation_ids, include_subagents)
             for target in SearchTarget}
    if embedder is not None and storage.vectors.space() == semantic.space(embedder):  # vectors of this embedder
        wanted = _wanted(SearchTarget.MESSAGES, limit)
        near = semantic.nearest(storage, semantic.query_vector(embedder, query), SearchTarget.MESSAGES, wanted,
                                conversation_ids=conversation_ids, include_subagents=include_subagents,
                                min_similarity=MIN_SIMILARITY)
        found[SearchTarget.MESSAGES] = with_semantic(found[SearchTarget.MESSAGES], near)[:wanted]
    top = best_score(query)
    messages = {m.message_id: m for m in storage.conversations.get_messages([int(h.id) for h in
                                                                             found[SearchTarget.MESSAGES]])}
    covering = storage.summaries.summaries_for_messages(list(messages)) if messages else {}
    candidates = fuse(found, top)
    stems = query_stems(query)
    covered: dict[str, list[Message]] = {}  # a summary's message hits, best first
    for h in candidates:
        if h.target is SearchTarget.MESSAGES and int(h.id) in messages:
            for summary_id in covering.get(int(h.id), []):
                covered.setdefault(summary_id, []).append(messages[int(h.id)])
    origins = subagent_origins(storage, candidates)
    summaries = {s.summary_id: s for s in storage.summaries.get_summaries(
        [h.id for h in candidates if h.target is SearchTarget.SUMMARIES])}
    sessions: dict[int, str | None] = {}
    results: list[Ranked] = []
    shown: set[int] = set()
    texts: set[str] = set()
    sentences: set[str] = set()
    for h in candidates:
        if len(results) >= limit:
            break
        hit = replace(to_hit(h, origins), session_id=_session(storage, sessions, h.conversation_id))
        if h.target is SearchTarget.MESSAGES:
            message = messages.get(int(h.id))
            if message is None or message.message_id in shown or _same(message.content) in texts:
                continue
            said = _same(best_sentence(message.content, stems))
            if said in sentences:  # its best sentence is already on the list: nothing new to read
                continue
            sentences.add(said)
            turns = _neighbours(storage, message, context) if context else []
            shown.update(m.message_id for m in (message, *turns))
            texts.update(_same(m.content) for m in (message, *turns))
            results.append(Ranked(
                0, storage.project_id, replace(hit, snippet=passage(message.content, stems, RESULT_CHARS)),
                tuple(covering.get(message.message_id, [])), message.role.value, None,
                tuple(Turn(f"msg_{m.message_id}", m.role.value, m.created_at,
                           passage(m.content, stems, NEIGHBOUR_CHARS)) for m in turns)))
        elif h.target is SearchTarget.SUMMARIES:
            summary = summaries.get(h.id)
            if summary is None:
                continue
            span = (summary.earliest_at, summary.latest_at) if summary.earliest_at and summary.latest_at else None
            members = [m for m in covered.get(summary.summary_id, []) if m.message_id not in shown
                       and _same(m.content) not in texts][:GROUP_HITS]
            if not members and _repeats(best_sentence(summary.content, stems), sentences):
                continue
            shown.update(m.message_id for m in members)
            texts.update(_same(m.content) for m in members)
            results.append(Ranked(
                0, storage.project_id, replace(hit, snippet=passage(summary.content, stems, GROUP_CHARS if members
                                                                    else RESULT_CHARS)),
                (), None, span, hits=tuple(Turn(f"msg_{m.message_id}", m.role.value, m.created_at,
                                passage(m.content, stems, NEIGHBOUR_CHARS)) for m in members)))
        else:
            results.append(Ranked(0, storage.project_id, replace(hit, snippet=passage(h.snippet, stems,
                                                                                      RESULT_CHARS)), ()))
    return numbered(within_cap(results))


def fuse(found: Mapping[SearchTarget, Sequence[SearchHit]], top: float) -> list[SearchHit]:
    """The lists of ``found`` (each best first) as one, relevance first: hits matching more of the query
    (phrases, then the whole query as one phrase: the integer and half parts of a ``RANKED`` score, which
    every backend and index count alike) go first; hits matching as much take turns, each list in its own
    order (a relevance fraction compares only within its own index), a message before a memory before a
    summary. A summary matching fewer phrases than the best message is left out (it would only repeat the
    message at greater length). ``score`` becomes the relevance (0..1): the matched part over ``top``, plus
    the place within its group."""
    best_message = max((math.floor(h.score) for h in found.get(SearchTarget.MESSAGES, ())), default=-1)
    groups: dict[float, list[tuple[int, int, SearchHit]]] = {}
    for target, hits in found.items():
        places: dict[float, int] = {}
        for h in hits:
            if target is SearchTarget.SUMMARIES and math.floor(h.score) < best_message:
                continue
            matched = math.floor(2 * h.score) / 2
            place = places.get(matched, 0)
            places[matched] = place + 1
            groups.setdefault(matched, []).append((place, KIND_ORDER[_kind(h)], h))
    fused = []
    for matched in sorted(groups, reverse=True):
        members = sorted(groups[matched], key=lambda m: (m[0], m[1], *best_first(m[2])[1:]))
        fused += [replace(h, score=min(1.0, (matched + FRACTION * (1 - n / len(members))) / top))
                  for n, (_, _, h) in enumerate(members)]
    return fused


def with_semantic(lexical: Sequence[SearchHit], near: Sequence[SearchHit]) -> list[SearchHit]:
    """One message list from the lexical hits and the semantic ones (cosine order), by weighted reciprocal
    rank (``RRF_K``; the semantic list weighs ``SEMANTIC_WEIGHT``). The fused order takes the lexical list's
    scores place by place, so ``fuse`` meets it as before (summaries and memories take turns with it by the
    phrases matched); places past the lexical list score as its last hit (one phrase matched when it is empty)."""
    fused: dict[str, float] = {}
    hits: dict[str, SearchHit] = {}
    for weight, ranked in ((1.0, lexical), (SEMANTIC_WEIGHT, near)):
        for n, h in enumerate(ranked):
            fused[h.id] = fused.get(h.id, 0.0) + weight / (RRF_K + n + 1)
            hits.setdefault(h.id, h)
    scores = sorted((h.score for h in lexical), reverse=True)
    rest = min(scores, default=1.0 + FRACTION / 2)
    return [replace(hits[i], score=scores[n] if n < len(scores) else rest)
            for n, i in enumerate(sorted(fused, key=lambda i: -fused[i]))]


def numbered(results: Sequence[Ranked]) -> list[Ranked]:
    return [replace(r, rank=n) for n, r in enumerate(results, start=1)]


def within_cap(results: Sequence[Ranked], cap: int = LIST_CHARS) -> list[Ranked]:
    """The leading results whose text fits ``cap`` characters together (the first one always)."""
    kept: list[Ranked] = []
    used = 0
    for r in results:
        if kept and used + r.chars > cap:
            break
        kept.append(r)
        used += r.chars
    return kept


def relevant(storage: ProjectStorage, query: str, target: SearchTarget, limit: int) -> list[SearchHit]:
    """``target``'s best ``limit`` hits for ``query`` with their relevance (0..1) as ``score``: the ranking
    ``search`` fuses, also used by prompt-time recall."""
    top = best_score(query)
    return [replace(h, score=min(1.0, h.score / top)) for h in _ranked(storage, query, target, limit, None, True)]


def _wanted(target: SearchTarget, limit: int) -> int:
    return max(limit * CANDIDATES, MIN_CANDIDATES) if target is SearchTarget.MESSAGES else limit


def _kind(hit: SearchHit) -> str:
    return {SearchTarget.MESSAGES: "message", SearchTarget.MEMORY: "memory"}.get(hit.target, "summary")


def _ranked(storage: ProjectStorage, query: str, target: SearchTarget, limit: int,
            conversation_ids: Sequence[int] | None, include_subagents: bool) -> list[SearchHit]:
    try:
        return lexical(storage, query, target, mode=SearchMode.RANKED, conversation_ids=conversation_ids,
                       since=None, limit=limit, include_subagents=include_subagents)
    except UnsupportedCapabilityError:  # no full text: a substring match is fully relevant
        hits = lexical(storage, query, target, mode=SearchMode.SUBSTRING, conversation_ids=conversation_ids,
                       since=None, limit=limit, include_subagents=include_subagents)
        return [replace(h, score=best_score(query)) for h in hits]


def _neighbours(storage: ProjectStorage, message: Message, count: int) -> list[Message]:
    """Up to ``count`` turns before and after ``message`` in its conversation."""
    after = message.seq - count - 1
    around = storage.conversations.list_messages(message.conversation_id, after_seq=after if after >= 0 else None,
                                                 limit=2 * count + 1 if after >= 0 else message.seq + count + 1)
    return [m for m in around if m.message_id != message.message_id and abs(m.seq - message.seq) <= count]


def _same(text: str) -> str:
    return " ".join(text.lower().split())


def _repeats(sentence: str, listed: set[str]) -> bool:
    """Whether ``sentence`` (a summary's best) quotes a best sentence already on the list: the summary would
    only show that turn again."""
    said = _same(sentence)
    return any(s in said for s in listed if s)


def _session(storage: ProjectStorage, known: dict[int, str | None], conversation_id: int | None) -> str | None:
    if conversation_id is None:
        return None
    if conversation_id not in known:
        conversation = storage.conversations.get_conversation(conversation_id)
        known[conversation_id] = conversation.session_id if conversation else None
    return known[conversation_id]
