"""``grep``: lexical matches in messages and summaries, message hits grouped by their covering summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
class SubagentOrigin:
    """Where a hit in a sub-agent run's conversation came from: the session and tool call that started it."""

    session_id: str
    parent_session_id: str
    tool_call_id: str | None
    agent_id: str | None


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    kind: str  # "message" | "summary" | "memory" (search only)
    conversation_id: int | None
    created_at: datetime
    score: float
    snippet: str
    subagent: SubagentOrigin | None = None
    session_id: str | None = None
    """The session of the hit's conversation (what ``lcm context`` and ``--session`` take)."""


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


def to_hit(hit: SearchHit, origins: Mapping[int, SubagentOrigin], sessions: Mapping[int, str] | None = None) -> Hit:
    """The recall form of a backend hit; ``sessions`` maps conversation ids to session ids
    (``conversation_sessions``)."""
    if hit.target is SearchTarget.MESSAGES:
        ident, kind = message_ref(int(hit.id)), "message"
    elif hit.target is SearchTarget.MEMORY:
        ident, kind = f"mem_{hit.id}", "memory"  # a promoted memory: shown by its snippet
    else:
        ident, kind = hit.id, "summary"
    cid = hit.conversation_id
    origin = origins.get(cid) if cid is not None else None
    session = (sessions or {}).get(cid) if cid is not None else None
    return Hit(ident, kind, cid, hit.created_at, hit.score, hit.snippet, origin, session)


def conversation_sessions(storage: ProjectStorage, hits: Sequence[SearchHit]) -> dict[int, str]:
    """The session id of each hit's conversation."""
    found = {}
    for cid in sorted({h.conversation_id for h in hits if h.conversation_id is not None}):
        conversation = storage.conversations.get_conversation(cid)
        if conversation is not None:
            found[cid] = conversation.session_id
    return found


def subagent_origins(storage: ProjectStorage, hits: Sequence[SearchHit]) -> dict[int, SubagentOrigin]:
    """The origin of each sub-agent run's conversation among the hits' conversations."""
    origins = {}
    for cid in sorted({h.conversation_id for h in hits if h.conversation_id is not None}):
        link = storage.conversations.get_subagent_link(cid)  # one lookup per hit conversation, not every link
        if link is not None:
            child = storage.conversations.get_conversation(cid)
            origins[cid] = SubagentOrigin(child.session_id if child else "", link.parent_session_id,
                                          link.tool_call_id, link.agent_id)
    return origins


def with_subagents(storage: ProjectStorage, conversation_ids: Sequence[int]) -> list[int]:
    """``conversation_ids`` and the conversations of the sub-agent runs their sessions started."""
    sessions = {c.session_id for cid in conversation_ids if (c := storage.conversations.get_conversation(cid))}
    children = [link.child_conversation_id for session in sorted(sessions)
                for link in storage.conversations.list_subagent_links(parent_session_id=session)]
    return [*conversation_ids, *(c for c in children if c not in conversation_ids)]


def lexical(
    storage: ProjectStorage,
    text: str,
    target: SearchTarget,
    *,
    mode: SearchMode,
    conversation_ids: Sequence[int] | None,
    since: datetime | None,
    limit: int | None,
    include_subagents: bool = True,
) -> list[SearchHit]:
    """One search per conversation segment (or one over all), merged by score then newest."""
    scopes: Sequence[int | None] = conversation_ids if conversation_ids is not None else [None]
    hits: list[SearchHit] = []
    for cid in scopes:
        hits.extend(storage.lexical_search.search(SearchQuery(text, mode, target, cid, since, limit,
                                                              include_subagents)))
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
    include_subagents: bool = True,
) -> GrepResult:
    """``include_subagents``: also the conversations of sub-agent runs (of the sessions searched); their hits
    name the session and tool call that started the run."""
    result = GrepResult(storage.project_id, pattern, mode, scope)
    if conversation_ids is not None and include_subagents:
        conversation_ids = with_subagents(storage, conversation_ids)
    if scope in (Scope.MESSAGES, Scope.BOTH):
        hits = lexical(storage, pattern, SearchTarget.MESSAGES, mode=mode, conversation_ids=conversation_ids,
                       since=since, limit=limit, include_subagents=include_subagents)
        covering = storage.summaries.summaries_for_messages([int(h.id) for h in hits]) if hits else {}
        origins, sessions = subagent_origins(storage, hits), conversation_sessions(storage, hits)
        groups: dict[str | None, HitGroup] = {}
        for raw in hits:
            leaf = next(iter(covering.get(int(raw.id), [])), None)
            groups.setdefault(leaf, HitGroup(leaf)).hits.append(to_hit(raw, origins, sessions))
        result.groups = list(groups.values())
    if scope in (Scope.SUMMARIES, Scope.BOTH):
        hits = lexical(storage, pattern, SearchTarget.SUMMARIES, mode=mode, conversation_ids=conversation_ids,
                       since=since, limit=limit, include_subagents=include_subagents)
        origins, sessions = subagent_origins(storage, hits), conversation_sessions(storage, hits)
        result.summary_hits = [to_hit(h, origins, sessions) for h in hits]
    return result
