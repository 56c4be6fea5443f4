"""The sub-agent runs messages started, and the note a leaf summary of those messages carries about them.

A run is a conversation of its own, compacted on its own, so a summary of the
parent never inlines it; instead it names each run it covers the start of and
where to drill down: the summaries in the run's context, or (none yet) the
run's first message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .ids import message_ref

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message, SubagentLink


def runs_started_by(storage: ProjectStorage, messages: Sequence[Message]) -> list[SubagentLink]:
    """The runs these messages started: their tool calls (or the calls' results) are the calls the runs are
    linked to. Messages of one conversation."""
    if not messages:
        return []
    conversation = storage.conversations.get_conversation(messages[0].conversation_id)
    if conversation is None:
        return []
    links = storage.conversations.list_subagent_links(parent_session_id=conversation.session_id)
    if not links:  # most sessions start none: their messages' parts are never read
        return []
    ids = {m.message_id for m in messages}
    calls: set[str] = set()
    if any(link.tool_call_id and link.parent_message_id not in ids for link in links):
        parts = storage.conversations.list_parts(sorted(ids))
        calls = {p.tool_call_id for found in parts.values() for p in found if p.tool_call_id}
    return [link for link in links
            if link.parent_message_id in ids or (link.tool_call_id and link.tool_call_id in calls)]


def runs_note(storage: ProjectStorage, messages: Sequence[Message]) -> str:
    """``Sub-agent runs started here: ...`` for the runs these messages started (empty when none): each run's
    session and the summaries in its context, else its first message (``lcm expand``/``lcm describe`` them)."""
    entries = []
    for link in runs_started_by(storage, messages):
        child = storage.conversations.get_conversation(link.child_conversation_id)
        summaries = [i.summary_id for i in storage.context.list_items(link.child_conversation_id) if i.summary_id]
        first = storage.conversations.list_messages(link.child_conversation_id, limit=1)
        where = ", ".join(summaries) if summaries else (message_ref(first[0].message_id) if first else "no messages")
        entries.append(f"{child.session_id if child else link.child_conversation_id} ({where})")
    return f"\n\nSub-agent runs started here: {'; '.join(entries)}" if entries else ""
