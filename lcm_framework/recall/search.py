"""``search``: questions answered from messages, summaries and promoted memory, fused by rank."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import UnsupportedCapabilityError
from ..storage.models import SearchHit, SearchMode, SearchTarget
from .grep import Hit, best_first, lexical, subagent_origins, to_hit

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage


@dataclass(frozen=True, slots=True)
class Ranked:
    rank: int
    project_id: str
    hit: Hit
    covered_by: tuple[str, ...]


RRF_K = 60
"""Reciprocal rank fusion constant: a hit at rank r of its own list scores 1 / (RRF_K + r)."""
TARGETS = (SearchTarget.MESSAGES, SearchTarget.SUMMARIES, SearchTarget.MEMORY)


def search(
    storage: ProjectStorage, query: str, *, limit: int = 20, conversation_ids: Sequence[int] | None = None,
    include_subagents: bool = True,
) -> list[Ranked]:
    """Best matches first; message hits name their covering summaries, hits in sub-agent runs
    (``include_subagents``) the session and tool call that started them.

    Each target (messages, summaries, promoted memory) is ranked by the backend (``RANKED``: any query
    word, stemmed, stop words ignored; more words, then the whole query as a phrase, first); the lists
    are fused by reciprocal rank, since scores of different indexes are not comparable. A hit's
    ``score`` is its fused score. A backend without full text falls back to substring matching.
    """
    found: list[SearchHit] = []
    for target in TARGETS:
        try:
            hits = lexical(storage, query, target, mode=SearchMode.RANKED, conversation_ids=conversation_ids,
                           since=None, limit=limit, include_subagents=include_subagents)
        except UnsupportedCapabilityError:
            hits = lexical(storage, query, target, mode=SearchMode.SUBSTRING, conversation_ids=conversation_ids,
                           since=None, limit=limit, include_subagents=include_subagents)
        found.extend(replace(h, score=1.0 / (RRF_K + rank)) for rank, h in enumerate(hits, start=1))
    found.sort(key=best_first)
    found = found[:limit]
    message_ids = [int(h.id) for h in found if h.target is SearchTarget.MESSAGES]
    covering = storage.summaries.summaries_for_messages(message_ids) if message_ids else {}
    origins = subagent_origins(storage, found)
    return [
        Ranked(rank, storage.project_id, to_hit(h, origins),
               tuple(covering.get(int(h.id), [])) if h.target is SearchTarget.MESSAGES else ())
        for rank, h in enumerate(found, start=1)
    ]
