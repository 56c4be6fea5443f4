"""``search``: ranked full-text recall over messages and summaries together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UnsupportedCapabilityError
from ..storage.models import SearchMode, SearchTarget
from .grep import Hit, best_first, lexical, subagent_origins, to_hit

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage


@dataclass(frozen=True, slots=True)
class Ranked:
    rank: int
    project_id: str
    hit: Hit
    covered_by: tuple[str, ...]


def search(
    storage: ProjectStorage, query: str, *, limit: int = 20, conversation_ids: Sequence[int] | None = None,
    include_subagents: bool = True,
) -> list[Ranked]:
    """Best matches first (backend score, then newest); message hits name their covering summaries, hits in
    sub-agent runs (``include_subagents``) the session and tool call that started them."""
    found = []
    for target in (SearchTarget.MESSAGES, SearchTarget.SUMMARIES):
        try:
            hits = lexical(storage, query, target, mode=SearchMode.FULL_TEXT, conversation_ids=conversation_ids,
                           since=None, limit=limit, include_subagents=include_subagents)
        except UnsupportedCapabilityError:
            hits = lexical(storage, query, target, mode=SearchMode.SUBSTRING, conversation_ids=conversation_ids,
                           since=None, limit=limit, include_subagents=include_subagents)
        found.extend(hits)
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
