"""Parent <-> child links of sub-agent runs, as recall shows them (``describe``, ``expand``, ``verify``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..compaction.ids import message_ref
from ..compaction.subagents import runs_started_by

__all__ = ["describe_link", "runs_started_by"]

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import SubagentLink


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
