"""Parent <-> child links of sub-agent runs, as recall shows them (``describe``, ``expand``, ``verify``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..compaction.ids import message_ref

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message, SubagentLink


def runs_started_by(storage: ProjectStorage, message: Message) -> list[SubagentLink]:
    """The runs a message started: its tool calls (or their results) are the calls the runs are linked to."""
    conversation = storage.conversations.get_conversation(message.conversation_id)
    if conversation is None:
        return []
    parts = storage.conversations.list_parts([message.message_id]).get(message.message_id, [])
    calls = {p.tool_call_id for p in parts if p.tool_call_id}
    return [link for link in storage.conversations.list_subagent_links(parent_session_id=conversation.session_id)
            if link.parent_message_id == message.message_id or (link.tool_call_id and link.tool_call_id in calls)]


def describe_link(storage: ProjectStorage, link: SubagentLink) -> dict[str, Any]:
    """A link as JSON-ready metadata: both conversations' sessions, the tool call and the run's id."""
    child = storage.conversations.get_conversation(link.child_conversation_id)
    return {
        "session_id": child.session_id if child else None,
        "conversation_id": link.child_conversation_id,
        "parent_session_id": link.parent_session_id,
        "parent_conversation_id": link.parent_conversation_id,
        "parent_message": message_ref(link.parent_message_id) if link.parent_message_id is not None else None,
        "tool_call_id": link.tool_call_id,
        "agent_id": link.agent_id,
        "agent_type": link.agent_type,
    }
