"""What the web explorer shows, read through the storage contracts: projects, the sessions of a project with
their sub-agent runs, one page of a session's transcript, a session's summary DAG and one summary's lineage.

Each function takes an open ``ProjectStorage`` (or the backend factory) and returns a frozen result; the
front end renders it as HTML or as its JSON (``to_jsonable``). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..recall.refs import RecallNotFoundError
from ..recall.sessions import SessionInfo, list_sessions

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Conversation, Message, MessagePart, ProjectRef, StorageUsage, Summary

PAGE_MESSAGES = 100
"""Messages per transcript page."""
SESSIONS_PAGE = 25
MAX_PAGE_MESSAGES = 500


class BrowseNotFoundError(RecallNotFoundError):
    """A session, summary or message the explorer was asked for is not stored."""


@dataclass(frozen=True, slots=True)
class ProjectRow:
    project_id: str
    root: str
    backend: str
    conversations: int
    subagent_conversations: int
    messages: int
    summaries: int
    memories: int
    storage_bytes: int | None
    bytes_per_transcript_byte: float | None
    last_activity: datetime | None


@dataclass(frozen=True, slots=True)
class SessionNode:
    """A main session with the sub-agent runs it started (oldest first)."""

    session: SessionInfo
    runs: tuple[SessionInfo, ...]
    tokens: int


@dataclass(frozen=True, slots=True)
class SessionList:
    project: ProjectRef
    sessions: tuple[SessionNode, ...]
    page: int
    pages: int
    total: int
    """Main sessions in all pages."""


@dataclass(frozen=True, slots=True)
class Part:
    kind: str
    text: str | None
    tool_name: str | None
    tool_call_id: str | None
    is_error: bool


@dataclass(frozen=True, slots=True)
class RunLink:
    """A sub-agent run one of this message's tool calls started."""

    session_id: str
    tool_call_id: str | None
    agent_type: str | None


@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    message_id: int
    seq: int
    role: str
    created_at: datetime
    content: str
    token_count: int
    parts: tuple[Part, ...]
    covered_by: tuple[str, ...]
    runs: tuple[RunLink, ...]
    has_error: bool


@dataclass(frozen=True, slots=True)
class Transcript:
    """One page of one segment of a session: messages after ``after_seq``, at most ``limit``."""

    project_id: str
    session_id: str
    conversation_id: int
    segments: tuple[int, ...]
    subagent_of: str | None
    messages: tuple[TranscriptMessage, ...]
    total_messages: int
    after_seq: int | None
    next_after_seq: int | None
    """Pass as ``after`` for the next page; ``None`` on the last page."""


@dataclass(frozen=True, slots=True)
class DagNode:
    summary_id: str
    conversation_id: int
    kind: str
    depth: int
    token_count: int
    descendant_count: int
    earliest_at: datetime | None
    latest_at: datetime | None
    coverage: tuple[float, float] | None
    """Where its span lies on the session's timeline, as fractions 0..1 (start, end)."""
    parents: tuple[str, ...]
    children: tuple[str, ...]
    preview: str


@dataclass(frozen=True, slots=True)
class SummaryDag:
    project_id: str
    session_id: str
    first_at: datetime | None
    last_at: datetime | None
    depths: tuple[tuple[int, tuple[DagNode, ...]], ...]
    """Deepest first, each depth's summaries in order."""


@dataclass(frozen=True, slots=True)
class SummaryDetail:
    project_id: str
    session_id: str | None
    summary_id: str
    kind: str
    depth: int
    content: str
    token_count: int
    earliest_at: datetime | None
    latest_at: datetime | None
    parents: tuple[str, ...]
    """The summaries it condenses (down the DAG)."""
    children: tuple[str, ...]
    """The summaries that condense it (up the DAG)."""
    sources: tuple[TranscriptMessage, ...]
    """A leaf's source messages, verbatim."""
    memories: tuple[str, ...]
    """Memories promoted from it."""


def project_row(storage: ProjectStorage, ref: ProjectRef, backend: str, usage: StorageUsage) -> ProjectRow:
    """One project's counts, its ``usage`` (``storage_usage(payloads=False)``, which the caller may keep a
    while: it reads the database's page map) and when its newest message was written."""
    stats = storage.stats()
    return ProjectRow(
        project_id=ref.project_id, root=ref.root, backend=backend, conversations=stats.conversations,
        subagent_conversations=stats.subagent_conversations, messages=stats.messages,
        summaries=sum(stats.summaries_by_depth.values()),
        memories=len(storage.promoted_memory.list_memories(include_archived=True)),
        storage_bytes=None if usage.shared else usage.total_bytes,
        bytes_per_transcript_byte=(round(usage.total_bytes / usage.transcript_bytes, 3)
                                   if usage.transcript_bytes and not usage.shared else None),
        last_activity=max(_last_times(storage).values(), default=None),
    )


def by_activity(rows: Sequence[ProjectRow]) -> list[ProjectRow]:
    """Most recently active first; projects with no message last."""
    return sorted(rows, key=lambda r: (r.last_activity is not None, r.last_activity, r.root), reverse=True)


def _last_times(storage: ProjectStorage) -> dict[str, datetime]:
    """The time of each session's newest message (two reads per conversation: its count, then its last seqs),
    sessions without messages left out."""
    conversations = storage.conversations
    found: dict[str, datetime] = {}
    for c in conversations.list_conversations():
        count = conversations.message_count(c.conversation_id)
        if count:
            tail = conversations.list_messages(c.conversation_id, after_seq=count - 2 if count > 1 else None)
            moment = tail[-1].created_at
            if c.session_id not in found or moment > found[c.session_id]:
                found[c.session_id] = moment
    return found


def sessions(storage: ProjectStorage, ref: ProjectRef, *, page: int = 1, per_page: int = SESSIONS_PAGE) -> SessionList:
    """One page of the main sessions, most recently active first, each with the sub-agent runs it started; a
    run whose parent is not stored is listed as a session of its own. Only the page's sessions are read in
    full (first prompt, agent, counts)."""
    conversations = storage.conversations
    segments_of: dict[str, list[int]] = {}
    for c in conversations.list_conversations():
        segments_of.setdefault(c.session_id, []).append(c.conversation_id)
    parent_of = {link.child_conversation_id: link.parent_session_id for link in conversations.list_subagent_links()}
    run_parent = {session: next((parent_of[c] for c in ids if c in parent_of), None)
                  for session, ids in segments_of.items()}
    runs_of: dict[str, list[str]] = {}
    for session, parent in run_parent.items():
        if parent is not None and parent in segments_of:
            runs_of.setdefault(parent, []).append(session)
    last = _last_times(storage)
    mains = sorted((s for s, p in run_parent.items() if p is None or p not in segments_of),
                   key=lambda s: (s in last, last.get(s), s), reverse=True)
    pages = max(1, -(-len(mains) // per_page))
    page = max(1, min(page, pages))
    shown = mains[(page - 1) * per_page: page * per_page]
    wanted = set(shown) | {r for s in shown for r in runs_of.get(s, [])}
    info = {s.session_id: s for s in list_sessions(storage, ref, only=wanted)}
    nodes = tuple(SessionNode(info[s], tuple(sorted((info[r] for r in runs_of.get(s, [])),
                                                   key=lambda r: (r.first_at, r.session_id))),
                              _tokens(storage, info[s].conversation_ids)) for s in shown)
    return SessionList(ref, nodes, page, pages, len(mains))


def _tokens(storage: ProjectStorage, conversation_ids: Sequence[int]) -> int:
    """Tokens of what the model sees of the session now (its context items)."""
    return sum(storage.context.token_total(c) for c in conversation_ids)


def segments(storage: ProjectStorage, session_id: str) -> list[Conversation]:
    """The conversation segments of exactly ``session_id`` (no prefix matching: these are permalinks)."""
    found = storage.conversations.find_conversations(session_id)
    if not found:
        raise BrowseNotFoundError(f"no session {session_id!r} in this project")
    return found


def transcript(storage: ProjectStorage, session_id: str, *, conversation_id: int | None = None,
               after_seq: int | None = None, limit: int = PAGE_MESSAGES) -> Transcript:
    """One page of a session's messages with their parts, the summaries covering each and the sub-agent runs
    their tool calls started."""
    found = segments(storage, session_id)
    ids = tuple(c.conversation_id for c in found)
    chosen = ids[0] if conversation_id is None else conversation_id
    if chosen not in ids:
        raise BrowseNotFoundError(f"conversation {chosen} is not a segment of session {session_id!r}")
    limit = max(1, min(limit, MAX_PAGE_MESSAGES))
    conversations = storage.conversations
    listed = conversations.list_messages(chosen, after_seq=after_seq, limit=limit + 1)
    page, more = listed[:limit], len(listed) > limit
    link = next((lk for c in ids if (lk := conversations.get_subagent_link(c)) is not None), None)
    return Transcript(
        project_id=storage.project_id, session_id=session_id, conversation_id=chosen, segments=ids,
        subagent_of=link.parent_session_id if link else None, messages=tuple(_messages(storage, page)),
        total_messages=conversations.message_count(chosen), after_seq=after_seq,
        next_after_seq=page[-1].seq if more and page else None,
    )


def _messages(storage: ProjectStorage, messages: Sequence[Message]) -> list[TranscriptMessage]:
    if not messages:
        return []
    ids = [m.message_id for m in messages]
    parts = storage.conversations.list_parts(ids)
    covering = storage.summaries.summaries_for_messages(ids)
    runs = _runs_started(storage, {m.conversation_id for m in messages})
    return [_message(m, parts.get(m.message_id, []), covering.get(m.message_id, []), runs.get(m.message_id, []))
            for m in messages]


def _message(message: Message, parts: Sequence[MessagePart], covered_by: Sequence[str],
             runs: Sequence[RunLink]) -> TranscriptMessage:
    shown = tuple(Part(p.kind.value, p.text, p.tool_name, p.tool_call_id, p.is_error) for p in parts)
    return TranscriptMessage(
        message_id=message.message_id, seq=message.seq, role=message.role.value, created_at=message.created_at,
        content=message.content, token_count=message.token_count, parts=shown, covered_by=tuple(covered_by),
        runs=tuple(runs), has_error=any(p.is_error for p in parts),
    )


def _runs_started(storage: ProjectStorage, conversation_ids: set[int]) -> dict[int, list[RunLink]]:
    """Sub-agent runs by the message whose tool call started them, for messages of ``conversation_ids``."""
    conversations = storage.conversations
    sessions_of = {c.conversation_id: c.session_id for c in (conversations.get_conversation(i)
                                                              for i in conversation_ids) if c is not None}
    found: dict[int, list[RunLink]] = {}
    for session_id in set(sessions_of.values()):
        for link in conversations.list_subagent_links(parent_session_id=session_id):
            if link.parent_message_id is None or link.parent_conversation_id not in conversation_ids:
                continue
            child = conversations.get_conversation(link.child_conversation_id)
            if child is not None:
                found.setdefault(link.parent_message_id, []).append(
                    RunLink(child.session_id, link.tool_call_id, link.agent_type))
    return found


def message_location(storage: ProjectStorage, message_id: int) -> tuple[str, int, int | None]:
    """``(session_id, conversation_id, after_seq)`` of the transcript page that shows ``message_id`` (pages
    start at multiples of ``PAGE_MESSAGES`` seqs)."""
    found = storage.conversations.get_messages([message_id])
    if not found:
        raise BrowseNotFoundError(f"no message msg_{message_id} in this project")
    message = found[0]
    conversation = storage.conversations.get_conversation(message.conversation_id)
    if conversation is None:
        raise BrowseNotFoundError(f"no conversation for msg_{message_id}")
    start = message.seq - message.seq % PAGE_MESSAGES
    return conversation.session_id, conversation.conversation_id, start - 1 if start else None


def summary_dag(storage: ProjectStorage, session_id: str) -> SummaryDag:
    """The session's summaries by depth, deepest first, each placed on the session's timeline."""
    found = segments(storage, session_id)
    summaries: list[Summary] = []
    for c in found:
        summaries.extend(storage.summaries.list_summaries(c.conversation_id))
    first, last = _span(storage, found)
    by_depth: dict[int, list[DagNode]] = {}
    for s in summaries:
        by_depth.setdefault(s.depth, []).append(DagNode(
            summary_id=s.summary_id, conversation_id=s.conversation_id, kind=s.kind.value, depth=s.depth,
            token_count=s.token_count, descendant_count=s.descendant_count, earliest_at=s.earliest_at,
            latest_at=s.latest_at, coverage=_coverage(s, first, last),
            parents=tuple(storage.summaries.parent_ids(s.summary_id)),
            children=tuple(storage.summaries.child_ids(s.summary_id)), preview=_preview(s.content),
        ))
    for nodes in by_depth.values():
        nodes.sort(key=lambda n: (n.earliest_at or datetime.min.replace(tzinfo=first.tzinfo if first else None),
                                  n.summary_id))
    return SummaryDag(storage.project_id, session_id, first, last,
                      tuple((d, tuple(by_depth[d])) for d in sorted(by_depth, reverse=True)))


def _span(storage: ProjectStorage, found: Sequence[Conversation]) -> tuple[datetime | None, datetime | None]:
    conversations = storage.conversations
    first = next((m[0].created_at for c in found if (m := conversations.list_messages(c.conversation_id, limit=1))),
                 None)
    last = None
    for c in reversed(found):
        count = conversations.message_count(c.conversation_id)
        if count:
            tail = conversations.list_messages(c.conversation_id, after_seq=count - 2 if count > 1 else None)
            last = tail[-1].created_at
            break
    return first, last


def _coverage(s: Summary, first: datetime | None, last: datetime | None) -> tuple[float, float] | None:
    if s.earliest_at is None or s.latest_at is None or first is None or last is None:
        return None
    whole = (last - first).total_seconds()
    if whole <= 0:
        return (0.0, 1.0)

    def at(moment: datetime) -> float:
        return round(min(1.0, max(0.0, (moment - first).total_seconds() / whole)), 4)

    return (at(s.earliest_at), at(s.latest_at))


def _preview(text: str, cap: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= cap else flat[: cap - 1].rstrip() + "…"


def summary_detail(storage: ProjectStorage, summary_id: str) -> SummaryDetail:
    """A summary verbatim, the summaries it condenses and those condensing it, a leaf's source messages, and
    the memories promoted from it."""
    summary = storage.summaries.get_summary(summary_id)
    if summary is None:
        raise BrowseNotFoundError(f"no summary {summary_id} in this project")
    conversation = storage.conversations.get_conversation(summary.conversation_id)
    sources = storage.conversations.get_messages(storage.summaries.source_message_ids(summary_id))
    memories = tuple(f"mem_{m.memory_id}" for m in storage.promoted_memory.list_memories(include_archived=True)
                     if m.source_summary_id == summary_id)
    return SummaryDetail(
        project_id=storage.project_id, session_id=conversation.session_id if conversation else None,
        summary_id=summary_id, kind=summary.kind.value, depth=summary.depth, content=summary.content,
        token_count=summary.token_count, earliest_at=summary.earliest_at, latest_at=summary.latest_at,
        parents=tuple(storage.summaries.parent_ids(summary_id)),
        children=tuple(storage.summaries.child_ids(summary_id)),
        sources=tuple(_messages(storage, sources)), memories=memories,
    )
