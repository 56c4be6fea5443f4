"""Context assembly: budgeted summaries plus the protected fresh tail.

Only context items are read (never the whole message history): the items
list, then the summaries, messages and parts of the items that fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..compaction.plan import fresh_tail_start
from ..storage.models import ContextItem, ContextItemKind, SummaryKind
from .blocks import Turn, message_turns, sanitize_tool_pairs, turn_text
from .xml import summary_xml

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message

LargeTextFilter = Callable[["Message", str], str]


@dataclass(frozen=True, slots=True)
class AssembledContext:
    conversation_id: int
    budget: int
    messages: list[Turn]
    token_estimate: int
    fresh_tail_tokens: int
    included_items: int
    dropped_items: int
    summary_ids: list[str] = field(default_factory=list)
    message_ids: list[int] = field(default_factory=list)

    @property
    def over_budget(self) -> bool:
        return self.token_estimate > self.budget

    def as_text(self) -> str:
        """Every turn as plain text under a role header: one text block."""
        return "\n\n".join(f"[{t['role']}]\n{turn_text(t)}" for t in self.messages)

    def as_json(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "budget": self.budget,
            "token_estimate": self.token_estimate,
            "fresh_tail_tokens": self.fresh_tail_tokens,
            "included_items": self.included_items,
            "dropped_items": self.dropped_items,
            "messages": self.messages,
        }


def select_items(items: list[ContextItem], budget: int, fresh_tail_count: int) -> tuple[int, int]:
    """(first included index, fresh tail start): the tail always, then newest evictable items that fit."""
    tail_start = fresh_tail_start(items, fresh_tail_count, lambda i: i.kind is ContextItemKind.MESSAGE)
    remaining = budget - sum(i.token_count for i in items[tail_start:])
    first = tail_start
    while first > 0 and items[first - 1].token_count <= remaining:
        remaining -= items[first - 1].token_count
        first -= 1
    return first, tail_start


def assemble(
    storage: ProjectStorage,
    conversation_id: int,
    *,
    budget: int,
    fresh_tail_count: int,
    text_filter: LargeTextFilter | None = None,
) -> AssembledContext:
    """Build the model's message list for ``conversation_id`` within ``budget`` tokens."""
    items = storage.context.list_items(conversation_id)
    first, tail_start = select_items(items, budget, fresh_tail_count)
    chosen = items[first:]
    summary_ids = [i.summary_id for i in chosen if i.summary_id is not None]
    message_ids = [i.message_id for i in chosen if i.message_id is not None]
    summaries = {s.summary_id: s for s in storage.summaries.get_summaries(summary_ids)}
    messages = {m.message_id: m for m in storage.conversations.get_messages(message_ids)}
    parts = storage.conversations.list_parts(message_ids) if message_ids else {}
    keep: LargeTextFilter = text_filter or (lambda _m, text: text)

    turns: list[Turn] = []
    for item in chosen:
        if item.summary_id is not None:
            summary = summaries.get(item.summary_id)
            if summary is None:
                continue
            parents = storage.summaries.parent_ids(summary.summary_id) if summary.kind is SummaryKind.CONDENSED else []
            turns.append({"role": "user", "content": [{"type": "text", "text": summary_xml(summary, parents)}]})
        elif item.message_id is not None and item.message_id in messages:
            message = messages[item.message_id]
            turns.extend(message_turns(message, parts.get(message.message_id, []), keep))
    return AssembledContext(
        conversation_id=conversation_id,
        budget=budget,
        messages=sanitize_tool_pairs(turns),
        token_estimate=sum(i.token_count for i in chosen),
        fresh_tail_tokens=sum(i.token_count for i in items[tail_start:]),
        included_items=len(chosen),
        dropped_items=first,
        summary_ids=summary_ids,
        message_ids=message_ids,
    )
