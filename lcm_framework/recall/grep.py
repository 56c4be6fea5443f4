"""``grep``: lexical matches in messages and summaries, message hits grouped by their covering summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING

from ..storage.models import SearchHit, SearchMode, SearchQuery, SearchTarget
from .refs import message_ref

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage


class Scope(str, Enum):
    MESSAGES = "messages"
    SUMMARIES = "summaries"
    BOTH = "both"


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    kind: str  # "message" | "summary" | "memory" (search only)
    conversation_id: int | None
    created_at: datetime
    score: float
    snippet: str


@dataclass(slots=True)
class HitGroup:
    """Message hits covered by one leaf summary (``summary_id`` None: not summarized yet)."""

    summary_id: str | None
    hits: list[Hit] = field(default_factory=list)


@dataclass(slots=True)
class GrepResult:
    project_id: str
    pattern: str
    mode: SearchMode
    scope: Scope
    groups: list[HitGroup] = field(default_factory=list)
    summary_hits: list[Hit] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(len(g.hits) for g in self.groups) + len(self.summary_hits)


def best_first(hit: SearchHit | Hit) -> tuple[float, float, str]:
    """Sort key of every recall ranking: higher score, then newer, then id."""
    return -hit.score, -hit.created_at.timestamp(), hit.id


def to_hit(hit: SearchHit) -> Hit:
    if hit.target is SearchTarget.MESSAGES:
        ident, kind = message_ref(int(hit.id)), "message"
    elif hit.target is SearchTarget.MEMORY:
        ident, kind = f"mem_{hit.id}", "memory"  # a promoted memory: shown by its snippet
    else:
        ident, kind = hit.id, "summary"
    return Hit(ident, kind, hit.conversation_id, hit.created_at, hit.score, hit.snippet)


def lexical(
    storage: ProjectStorage,
    text: str,
    target: SearchTarget,
    *,
    mode: SearchMode,
    conversation_ids: Sequence[int] | None,
    since: datetime | None,
    limit: int | None,
) -> list[SearchHit]:
    """One search per conversation segment (or one over all), merged by score then newest."""
    scopes: Sequence[int | None] = conversation_ids if conversation_ids is not None else [None]
    hits: list[SearchHit] = []
    for cid in scopes:
        hits.extend(storage.lexical_search.search(SearchQuery(text, mode, target, cid, since, limit)))
    hits.sort(key=best_first)
    return hits if limit is None or limit < 0 else hits[:limit]


def grep(
    storage: ProjectStorage,
    pattern: str,
    *,
    mode: SearchMode = SearchMode.FULL_TEXT,
    scope: Scope = Scope.BOTH,
    conversation_ids: Sequence[int] | None = None,
    since: datetime | None = None,
    limit: int | None = 50,
) -> GrepResult:
    result = GrepResult(storage.project_id, pattern, mode, scope)
    if scope in (Scope.MESSAGES, Scope.BOTH):
        hits = lexical(storage, pattern, SearchTarget.MESSAGES, mode=mode, conversation_ids=conversation_ids,
                       since=since, limit=limit)
        covering = storage.summaries.summaries_for_messages([int(h.id) for h in hits]) if hits else {}
        groups: dict[str | None, HitGroup] = {}
        for raw in hits:
            leaf = next(iter(covering.get(int(raw.id), [])), None)
            groups.setdefault(leaf, HitGroup(leaf)).hits.append(to_hit(raw))
        result.groups = list(groups.values())
    if scope in (Scope.SUMMARIES, Scope.BOTH):
        hits = lexical(storage, pattern, SearchTarget.SUMMARIES, mode=mode, conversation_ids=conversation_ids,
                       since=since, limit=limit)
        result.summary_hits = [to_hit(h) for h in hits]
    return result
