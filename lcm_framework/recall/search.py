"""``search``: questions answered from messages, summaries and promoted memory, fused by rank."""

from __future__ import annotations

import math
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
TIE_BREAK = 1e-6
"""Per query phrase matched: orders hits of equal rank, far below the gap between two ranks."""
TARGETS = (SearchTarget.MESSAGES, SearchTarget.SUMMARIES, SearchTarget.MEMORY)


def search(
    storage: ProjectStorage, query: str, *, limit: int = 20, conversation_ids: Sequence[int] | None = None,
    include_subagents: bool = True,
) -> list[Ranked]:
    """Best matches first; message hits name their covering summaries.

    Each target (messages, summaries, promoted memory) is ranked by the backend (``RANKED``: any query
    word, stemmed, stop words ignored; more words, then the whole query as a phrase, first). The lists
    are fused by reciprocal rank, since relevance scores of different indexes are not comparable: a
    hit's ``score`` is 1 / (RRF_K + its rank in its own list); equal ranks (from different lists or
    projects) go to the hit matching more query phrases (a TIE_BREAK per phrase). A backend without
    full text falls back to substring matching. Hits in sub-agent runs (``include_subagents``) name the
    session and tool call that started them.
    """
    found: list[SearchHit] = []
    for target in TARGETS:
        try:
            hits = lexical(storage, query, target, mode=SearchMode.RANKED, conversation_ids=conversation_ids,
                           since=None, limit=limit, include_subagents=include_subagents)
        except UnsupportedCapabilityError:
            hits = lexical(storage, query, target, mode=SearchMode.SUBSTRING, conversation_ids=conversation_ids,
                           since=None, limit=limit, include_subagents=include_subagents)
        found.extend(replace(h, score=1.0 / (RRF_K + rank) + math.floor(h.score) * TIE_BREAK)
                     for rank, h in enumerate(hits, start=1))
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
