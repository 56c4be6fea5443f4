"""The semantic recall lane: message and summary vectors filled, backfilled and searched.

``recall.semantic`` turns it on per project: ``on``, ``off`` or ``auto`` (on when the embedder
``recall.embedder`` names can run here, off without a word otherwise). ``lane`` gives the embedder (loaded
once per process) or ``None``. ``fill`` embeds what has no vector yet, in batches of ``BATCH`` (the messages an
import added after the newest embedded one, every summary without one; ``everything``: every message too,
for ``lcm embed``), after recording the embedder (``VectorSpace``): another embedder or dimensions drop the
old vectors. ``nearest`` ranks a target by cosine similarity with the query's vector; ``search`` fuses that
list with the lexical one (``recall.search``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..embedding import Embedder, EmbedderFactory, EmbeddingUnavailableError, select_embedder
from ..embedding.codec import cosine, quantize
from ..errors import ConfigError
from ..storage.models import Memory, SearchHit, SearchTarget, StoredVector, VectorQuery, VectorSpace

if TYPE_CHECKING:
    from ..config import Config
    from ..storage.contracts import ProjectStorage


class Registered(Protocol):
    """Where the registered embedders come from (the plugin manager)."""

    def embedders(self) -> Mapping[str, EmbedderFactory]: ...


MODES = ("auto", "on", "off")
BATCH = 512
TEXT_CHARS = 2_000
"""Characters of a message or summary embedded (its start: a long tool output would only dilute it)."""
TARGETS = (SearchTarget.MESSAGES, SearchTarget.SUMMARIES)

_LOADED: dict[tuple[str, tuple[tuple[str, str], ...]], Embedder] = {}
"""Embedders loaded, by name and the settings they may read (``recall.*``, ``embedding.*``)."""
_MEMORY_VECTORS: dict[tuple[str, str], bytes] = {}
_LOCK = threading.Lock()
_EMBEDDING = threading.Lock()
"""One text batch at a time through an embedder: a daemon's request threads embed queries while its ingest
embeds what a hook stored."""


@dataclass(frozen=True, slots=True)
class Filled:
    """What ``fill`` embedded: new vectors per target, and whether an older embedder's were dropped."""

    messages: int = 0
    summaries: int = 0
    dropped: bool = False


def lane(config: Config, plugins: Registered) -> Embedder | None:
    """The embedder of the semantic lane when ``recall.semantic`` has it on here, else ``None``. ``on`` with
    an embedder that cannot run is an ``EmbeddingUnavailableError`` (``ConfigError`` for an unknown name)."""
    mode = str(config.get("recall.semantic"))
    if mode == "off":
        return None
    key = (str(config.get("recall.embedder")), lane_settings(config))
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        try:
            embedder = select_embedder(plugins.embedders(), config)
        except (EmbeddingUnavailableError, ConfigError):
            if mode == "on":
                raise
            return None
        _LOADED[key] = embedder
        return embedder


def lane_settings(config: Config) -> tuple[tuple[str, str], ...]:
    """The settings an embedder may read (``recall.*``, ``embedding.*``): configurations alike in them get the
    same embedder."""
    return tuple(sorted((k, str(r.value)) for k, r in config.values.items()
                        if k.startswith(("recall.", "embedding."))))


def space(embedder: Embedder) -> VectorSpace:
    return VectorSpace(embedder.name, int(embedder.dimensions))


def texts_of(storage: ProjectStorage, target: SearchTarget, ids: Sequence[str]) -> list[tuple[str, str]]:
    """``(id, text)`` of the messages or summaries ``ids`` still stored, in order."""
    if target is SearchTarget.MESSAGES:
        return [(str(m.message_id), m.content[:TEXT_CHARS])
                for m in storage.conversations.get_messages([int(i) for i in ids])]
    return [(s.summary_id, s.content[:TEXT_CHARS]) for s in storage.summaries.get_summaries(list(ids))]


def embed_texts(embedder: Embedder, texts: Sequence[str]) -> list[bytes]:
    if not texts:
        return []
    with _EMBEDDING:
        vectors = embedder.embed(list(texts))
    return quantize(vectors)


def fill(storage: ProjectStorage, embedder: Embedder, *, everything: bool = False,
         progress: Callable[[SearchTarget, int], None] | None = None) -> Filled:
    """Embed what has no vector: summaries, and messages (all of them with ``everything``, else those after
    the newest embedded message: what an import just added). Idempotent; an interrupted run resumes where
    it stopped. ``progress(target, how many more)`` after each batch."""
    dropped = storage.vectors.set_space(space(embedder))
    counts = storage.vectors.counts()
    added = {}
    for target in TARGETS:
        after = None if everything or dropped or target is SearchTarget.SUMMARIES else counts[target].newest
        total = 0
        while ids := storage.vectors.unembedded(target, after=after, limit=BATCH):
            found = texts_of(storage, target, ids)
            vectors = embed_texts(embedder, [text for _, text in found])
            total += storage.vectors.put([StoredVector(target, i, v) for (i, _), v in zip(found, vectors,
                                                                                           strict=True)])
            after = ids[-1]
            if progress is not None:
                progress(target, len(found))
        added[target] = total
    return Filled(added[SearchTarget.MESSAGES], added[SearchTarget.SUMMARIES], dropped)


def fill_lane(storage: ProjectStorage, config: Config, plugins: Registered, *, everything: bool = False) -> Filled:
    """``fill`` where the lane is on for ``config`` (what an import just stored); an embedder that cannot run
    is left for ``lcm embed`` to report (the import itself has succeeded)."""
    try:
        embedder = lane(config, plugins)
        return fill(storage, embedder, everything=everything) if embedder is not None else Filled()
    except (EmbeddingUnavailableError, ConfigError):
        return Filled()


def left_to_fill(storage: ProjectStorage) -> bool:
    """Whether ``fill`` (not ``everything``) would embed anything: a summary without a vector, or a message
    after the newest embedded one."""
    counts = storage.vectors.counts()
    return any(storage.vectors.unembedded(target, after=None if target is SearchTarget.SUMMARIES
                                          else counts[target].newest, limit=1) for target in TARGETS)


def lane_or_none(config: Config, plugins: Registered) -> Embedder | None:
    """``lane``, or ``None`` where it cannot run (what hooks use: recall stays lexical rather than failing)."""
    try:
        return lane(config, plugins)
    except (EmbeddingUnavailableError, ConfigError):
        return None


def similar_memories(storage: ProjectStorage, embedder: Embedder, query: str) -> list[tuple[Memory, float]]:
    """The active memories with their cosine similarity to ``query``, most similar first. Memories are few:
    their vectors are computed here (kept per process by content), not stored."""
    memories = storage.promoted_memory.list_memories()
    if not memories or not query.strip():
        return []
    missing = [m.content for m in memories if (embedder.name, m.content) not in _MEMORY_VECTORS]
    if missing:
        for content, vector in zip(missing, embed_texts(embedder, missing), strict=True):
            _MEMORY_VECTORS[(embedder.name, content)] = vector
    found = cosine(query_vector(embedder, query),
                   ((n, _MEMORY_VECTORS[(embedder.name, m.content)]) for n, m in enumerate(memories)), -1)
    return [(memories[n], score) for n, score in found]


def query_vector(embedder: Embedder, query: str) -> tuple[float, ...]:
    with _EMBEDDING:
        vectors: Any = embedder.embed([query[:TEXT_CHARS]])
    return tuple(float(x) for x in vectors[0])


def nearest(storage: ProjectStorage, vector: tuple[float, ...], target: SearchTarget, limit: int, *,
            conversation_ids: Sequence[int] | None = None, include_subagents: bool = True,
            min_similarity: float = 0.0) -> list[SearchHit]:
    """``target``'s best ``limit`` hits by cosine similarity with ``vector`` (at least ``min_similarity``)."""
    scopes: Sequence[int | None] = conversation_ids if conversation_ids is not None else [None]
    hits: list[SearchHit] = []
    for cid in scopes:
        hits += storage.vectors.nearest(VectorQuery(target, vector, limit, cid, include_subagents))
    hits.sort(key=lambda h: -h.score)
    return [h for h in hits if h.score >= min_similarity][:limit]
