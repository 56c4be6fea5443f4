"""Memory operations on one project's storage: store with dedup, feedback, review, forget, stats.

Public ids are ``mem_<N>`` (project scope) and ``gmem_<N>`` (the user-wide scope, ``--global``). The
recall repository keys a memory's surfacings and feedback by that id.

Confidence (0..1) moves by fixed rules, all here:
* storing the same insight again (``text.same_insight``) raises it: ``c + (1 - c) * REINFORCE``, at least
  the confidence given, instead of adding a copy, and the memory then cites the confirming summaries too
  (a confirmation from summaries the memory already cites changes nothing);
* useful feedback raises it (``c + (1 - c) * USEFUL_STEP``), not-useful feedback lowers it (``c * NOT_USEFUL``);
* every ``IGNORED_EVERY`` surfacings of a memory never marked useful lowers it (``c * IGNORED``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ..errors import LcmError, UnsupportedCapabilityError
from ..recall.refs import RecallNotFoundError
from ..storage.lineage import Lineage, parse
from ..storage.models import Memory, NewMemory, RecallStats, SearchMode, SearchQuery, SearchTarget
from . import text

if TYPE_CHECKING:
    from ..scrub import Scrubber
    from ..storage.contracts import ProjectStorage, Repositories

PROJECT_PREFIX = "mem_"
GLOBAL_PREFIX = "gmem_"
FORGOTTEN_PREFIX = "forgotten:"
DEFAULT_CONFIDENCE = 0.5
REINFORCE = 0.3
USEFUL_STEP = 0.2
NOT_USEFUL = 0.75
IGNORED_EVERY = 5
IGNORED = 0.9
REVIEW_AGE_DAYS = 30
REVIEW_MAX_CONFIDENCE = 0.4


class MemoryNotFoundError(RecallNotFoundError):
    """No memory has this id in the scope (the daemon answers 404)."""

    code = "memory_not_found"


class MemoryRefError(LcmError):
    exit_code = 2


@dataclass(frozen=True, slots=True)
class Stored:
    memory: Memory
    created: bool
    """False when an existing memory held the same insight (its confidence was raised)."""
    unchanged: bool = False
    """True when that memory already cited the same summaries: nothing was written."""


@dataclass(frozen=True, slots=True)
class MemoryStats:
    memory: Memory
    recall: RecallStats


def memory_ref(memory_id: int, *, user_wide: bool = False) -> str:
    return f"{GLOBAL_PREFIX if user_wide else PROJECT_PREFIX}{memory_id}"


def parse_memory_ref(ref: str) -> tuple[int, bool]:
    """``(memory_id, user_wide)`` of ``mem_N`` / ``gmem_N`` (a bare number is a project memory)."""
    for prefix, user_wide in ((GLOBAL_PREFIX, True), (PROJECT_PREFIX, False), ("", False)):
        body = ref[len(prefix):]
        if ref.startswith(prefix) and body.isdigit() and len(body) <= 16:
            return int(body), user_wide
    raise MemoryRefError(f"not a memory id: {ref!r} (expected mem_<number> or gmem_<number>)")


def clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def find_same(storage: ProjectStorage | Repositories, content: str) -> Memory | None:
    """The stored memory (archived ones included) holding the same insight as ``content``, if any."""
    normalized, words = text.normalize(content), text.content_words(content)
    best: tuple[float, Memory] | None = None
    for memory in storage.promoted_memory.list_memories(include_archived=True):
        if text.normalize(memory.content) == normalized:
            return memory
        score = text.similarity(words, text.content_words(memory.content))
        if score >= text.JACCARD and (best is None or score > best[0]):
            best = (score, memory)
    return best[1] if best else None


def remember(storage: ProjectStorage, content: str, *, scrubber: Scrubber, tags: Sequence[str] = (),
             confidence: float | None = None, lineage: Lineage | None = None) -> Stored:
    """Store ``content`` as a memory, or reinforce the memory that already holds the same insight.

    Every text stored (content, tags, lineage) goes through ``scrubber`` first, whichever door it came by.
    """
    content = scrubber.scrub_text(content.strip())[0]
    if not content:
        raise MemoryRefError("a memory needs some text")
    tags = [scrubber.scrub_text(tag)[0] for tag in tags]
    given = DEFAULT_CONFIDENCE if confidence is None else confidence
    source = _scrubbed(scrubber, lineage or Lineage())

    def apply(repos: Repositories) -> Stored:
        same = find_same(repos, content)
        if same is not None and source.summaries and set(source.summaries) <= set(parse(same.metadata).summaries):
            return Stored(same, False, unchanged=True)  # promoted again from the same summaries: not a new confirmation
        if same is None:
            new = NewMemory(content, tuple(dict.fromkeys(tags)), clamp(given), source.source_summary_id,
                            source.to_metadata())
            return Stored(repos.promoted_memory.create_memory(new), True)
        raised = max(clamp(given), same.confidence + (1.0 - same.confidence) * REINFORCE)
        cited = parse(same.metadata)
        updated = repos.promoted_memory.set_confidence(
            same.memory_id, clamp(raised), metadata=cited.citing(source).to_metadata() if source.summaries else None)
        if same.archived:
            updated = repos.promoted_memory.revive(same.memory_id)
        return Stored(updated, False)

    return storage.transaction(apply)


def _scrubbed(scrubber: Scrubber, lineage: Lineage) -> Lineage:
    """``lineage``, or its JSON scrubbed like a transcript record when a rule matches in it."""
    scrubbed = scrubber.scrub_record(json.loads(lineage.to_metadata()))
    return parse(scrubbed.canonical_json) if scrubbed.redactions else lineage


def get(storage: ProjectStorage, memory_id: int) -> Memory:
    found = storage.promoted_memory.get_memory(memory_id)
    if found is None:
        raise MemoryNotFoundError(f"no memory {memory_id} in this scope (`lcm memory list --archived`)")
    return found


def feedback(storage: ProjectStorage, memory_id: int, ref: str, *, useful: bool) -> Memory:
    """Record whether a surfaced memory helped, and move its confidence."""
    memory = get(storage, memory_id)

    def apply(repos: Repositories) -> Memory:
        repos.recall.record_feedback(ref, useful=useful)
        c = memory.confidence
        return repos.promoted_memory.set_confidence(memory_id, clamp(c + (1 - c) * USEFUL_STEP if useful
                                                                     else c * NOT_USEFUL))

    return storage.transaction(apply)


def record_surfacing(storage: ProjectStorage, refs: Sequence[str], *, query: str | None) -> None:
    """Record that these memories (and summaries) were shown; lower memories ignored again and again."""
    if not refs:
        return
    storage.recall.record_surfacing(list(refs), query=query)
    for ref in refs:
        if not ref.startswith((PROJECT_PREFIX, GLOBAL_PREFIX)):
            continue
        stats = storage.recall.stats(ref)
        if stats.useful == 0 and stats.surfaced % IGNORED_EVERY == 0:
            memory = storage.promoted_memory.get_memory(parse_memory_ref(ref)[0])
            if memory is not None:
                storage.promoted_memory.set_confidence(memory.memory_id, clamp(memory.confidence * IGNORED))


def review(storage: ProjectStorage, *, older_than_days: int = REVIEW_AGE_DAYS,
           max_confidence: float = REVIEW_MAX_CONFIDENCE, prefix: str = PROJECT_PREFIX) -> list[Memory]:
    """Stale candidates: not touched for ``older_than_days``, confidence at most ``max_confidence``, never useful."""
    cutoff = datetime.now(UTC) - timedelta(days=older_than_days)
    return [m for m in storage.promoted_memory.stale_candidates(older_than=cutoff, max_confidence=max_confidence)
            if storage.recall.stats(f"{prefix}{m.memory_id}").useful == 0]


def forget(storage: ProjectStorage, memory_id: int, ref: str) -> None:
    """Delete one memory and its recall history; promotion never brings the same text back
    (``was_forgotten``)."""
    memory = get(storage, memory_id)

    def apply(repos: Repositories) -> None:
        repos.promoted_memory.delete_memory(memory_id)
        repos.recall.forget([ref])
        repos.recall.record_feedback(_tombstone(memory.content), useful=False)

    storage.transaction(apply)


def was_forgotten(storage: ProjectStorage | Repositories, content: str) -> bool:
    """Whether the user forgot a memory of this text (compared normalized)."""
    return storage.recall.stats(_tombstone(content)).not_useful > 0


def _tombstone(content: str) -> str:
    """The recall target that records a forgotten text: a digest of its normalized words, never the text."""
    return f"{FORGOTTEN_PREFIX}{hashlib.sha256(text.normalize(content).encode()).hexdigest()[:32]}"


def stats(storage: ProjectStorage, *, prefix: str = PROJECT_PREFIX,
          include_archived: bool = False) -> list[MemoryStats]:
    return [MemoryStats(m, storage.recall.stats(f"{prefix}{m.memory_id}"))
            for m in storage.promoted_memory.list_memories(include_archived=include_archived)]


def search(storage: ProjectStorage, query: str, *, limit: int = 20) -> list[tuple[Memory, float]]:
    """Active memories matching ``query``, best first, by the backend's ranked search (any word, stemmed, stop
    words ignored; substring matching when the backend has no full text)."""
    try:
        hits = storage.lexical_search.search(SearchQuery(query, SearchMode.RANKED, SearchTarget.MEMORY,
                                                         limit=limit))
    except UnsupportedCapabilityError:
        hits = storage.lexical_search.search(SearchQuery(query, SearchMode.SUBSTRING, SearchTarget.MEMORY,
                                                         limit=limit))
    found = []
    for hit in hits:
        memory = storage.promoted_memory.get_memory(int(hit.id))
        if memory is not None:
            found.append((memory, hit.score))
    return found
