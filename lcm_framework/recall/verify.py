"""``verify``: every stored message is reachable from its conversation's context, exactly once, and every
sub-agent run's link names its parent session and, once linked, a tool call its parent really holds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import SubagentLink

SHOWN = 50


@dataclass(slots=True)
class ConversationCheck:
    conversation_id: int
    session_id: str
    messages: int
    reachable: int
    unreachable: list[int] = field(default_factory=list)
    duplicated: list[int] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)
    subagent_of: str | None = None
    """For a sub-agent run: ``<parent session> <tool call id or "(call not stored yet)">``."""
    link_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.unreachable or self.duplicated or self.dangling or self.link_problems)


@dataclass(slots=True)
class VerifyReport:
    project_id: str
    conversations: list[ConversationCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.conversations)


def reachable_messages(storage: ProjectStorage, conversation_id: int, dangling: list[str]) -> list[int]:
    """Message ids reached from the context (raw items and summaries down to leaves), in context order."""
    found: list[int] = []
    for item in storage.context.list_items(conversation_id):
        if item.message_id is not None:
            found.append(item.message_id)
        elif item.summary_id is not None:
            found.extend(_leaves_down(storage, item.summary_id, dangling))
    return found


def _leaves_down(storage: ProjectStorage, root: str, dangling: list[str]) -> list[int]:
    out: list[int] = []
    stack = [root]
    while stack:
        sid = stack.pop()
        parents = storage.summaries.parent_ids(sid)
        if parents:
            stack.extend(reversed(parents))
            continue
        sources = storage.summaries.source_message_ids(sid)
        if not sources and storage.summaries.get_summary(sid) is None:
            dangling.append(sid)
        out.extend(sources)
    return out


def _check_link(storage: ProjectStorage, link: SubagentLink, check: ConversationCheck) -> None:
    """The parent conversation is of the parent session and its message holds the linked tool call."""
    found = link.tool_call_id if link.parent_message_id is not None else None
    check.subagent_of = f"{link.parent_session_id} {found or '(call not stored yet)'}"
    if found is None:
        return
    parent = (storage.conversations.get_conversation(link.parent_conversation_id)
              if link.parent_conversation_id is not None else None)
    if parent is None or parent.session_id != link.parent_session_id:
        check.link_problems.append("the parent conversation is missing or of another session")
        return
    message = storage.conversations.get_messages([link.parent_message_id] if link.parent_message_id else [])
    parts = storage.conversations.list_parts([m.message_id for m in message])
    if not message or message[0].conversation_id != parent.conversation_id or not any(
            p.tool_call_id == link.tool_call_id for p in parts.get(message[0].message_id, [])):
        check.link_problems.append(f"no message of the parent holds tool call {link.tool_call_id}")


def verify(storage: ProjectStorage) -> VerifyReport:
    report = VerifyReport(storage.project_id)
    links = {link.child_conversation_id: link for link in storage.conversations.list_subagent_links()}
    for conversation in storage.conversations.list_conversations():
        cid = conversation.conversation_id
        dangling: list[str] = []
        reached = reachable_messages(storage, cid, dangling)
        stored = [m.message_id for m in storage.conversations.list_messages(cid)]
        counts = Counter(reached)
        check = ConversationCheck(cid, conversation.session_id, len(stored), len(counts))
        check.unreachable = [m for m in stored if m not in counts][:SHOWN]
        check.duplicated = sorted(m for m, n in counts.items() if n > 1)[:SHOWN]
        check.dangling = dangling[:SHOWN]
        if cid in links:
            _check_link(storage, links[cid], check)
        report.conversations.append(check)
    return report
