"""The sessions a project holds: agent, time span, size and first prompt, sub-agent runs beside their parent."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..storage.models import Role

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Conversation, Message, ProjectRef

PROMPT_SCAN = 20
"""How many of a session's first messages are read to find its first user prompt."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    project_id: str
    project_root: str
    session_id: str
    conversation_ids: tuple[int, ...]
    """The session's segments, oldest first."""
    agent: str | None
    """The client that wrote the transcript (its format's client name); ``None`` when no record says."""
    first_at: datetime
    last_at: datetime
    messages: int
    title: str | None
    first_prompt: str | None
    subagent_of: str | None
    """The session that started this sub-agent run; ``None`` for a main session."""


def list_sessions(storage: ProjectStorage, project: ProjectRef, *,
                  only: Collection[str] | None = None) -> list[SessionInfo]:
    """Every session of ``storage`` (or those named in ``only``), most recently active first."""
    by_session: dict[str, list[Conversation]] = {}
    for conversation in storage.conversations.list_conversations():
        if only is None or conversation.session_id in only:
            by_session.setdefault(conversation.session_id, []).append(conversation)
    parents = {link.child_conversation_id: link.parent_session_id
               for link in storage.conversations.list_subagent_links()}
    found = [_session(storage, project, session_id, segments, parents) for session_id, segments in by_session.items()]
    return sorted(found, key=lambda s: (s.last_at, s.session_id), reverse=True)


def sessions_across(app: App, *, all_projects: bool) -> list[SessionInfo]:
    """The sessions of the current project (none when nothing is stored for it), or of every project."""
    if not all_projects:
        ref = app.project_ref()
        with app.existing_project() as storage:
            return [] if storage is None else list_sessions(storage, ref)
    found: list[SessionInfo] = []
    for ref in app.storage.list_projects():
        storage = app.storage.open_existing_project(ref)
        if storage is None:
            continue
        try:
            found.extend(list_sessions(storage, ref))
        finally:
            storage.close()
    return found


def _session(storage: ProjectStorage, project: ProjectRef, session_id: str, segments: Sequence[Conversation],
             parents: dict[int, str]) -> SessionInfo:
    conversations = storage.conversations
    first = conversations.list_messages(segments[0].conversation_id, limit=PROMPT_SCAN)
    counts = [conversations.message_count(c.conversation_id) for c in segments]
    last = None
    for conversation, count in zip(reversed(segments), reversed(counts), strict=True):
        if count:
            last = _last_message(storage, conversation.conversation_id, count)
            break
    records = storage.native_transcripts.list_by_message(first[0].message_id) if first else []
    return SessionInfo(
        project_id=project.project_id,
        project_root=project.root,
        session_id=session_id,
        conversation_ids=tuple(c.conversation_id for c in segments),
        agent=records[0].format.client_name if records else None,
        first_at=first[0].created_at if first else segments[0].created_at,
        last_at=last.created_at if last else segments[-1].created_at,
        messages=sum(counts),
        title=next((c.title for c in segments if c.title), None),
        first_prompt=next((m.content for m in first if m.role is Role.USER), None),
        subagent_of=next((parents[c.conversation_id] for c in segments if c.conversation_id in parents), None),
    )


def _last_message(storage: ProjectStorage, conversation_id: int, count: int) -> Message:
    """The message with the highest seq. Seqs are distinct and non-negative, so the highest is at least
    ``count - 1``: reading the seqs above ``count - 2`` finds it, reading one message when they are dense."""
    return storage.conversations.list_messages(conversation_id, after_seq=count - 2 if count > 1 else None)[-1]
