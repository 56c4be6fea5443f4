"""Context assembly: the protected fresh tail, older ranges at the finest DAG level the budget allows.

Only what selection needs is read (never the whole message history): the
context list, then the lineage of the summaries it refines, then the
messages and parts of what is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..storage.models import SummaryKind
from .blocks import Turn, message_turns, sanitize_tool_pairs, turn_text
from .select import Piece, Selection, select
from .xml import summary_xml

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message, Summary

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
    selection: Selection
    """The pieces shown, in order, and where the fresh tail starts (what the explorer draws as token bars)."""
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


class _Dag:
    """Reads a conversation's DAG on demand for ``select`` and keeps what it read for rendering."""

    def __init__(self, storage: ProjectStorage) -> None:
        self.storage = storage
        self.summaries: dict[str, Summary] = {}
        self.messages: dict[int, Message] = {}
        self.parents: dict[str, list[str]] = {}

    def load_summaries(self, ids: list[str]) -> None:
        missing = [sid for sid in ids if sid not in self.summaries]
        self.summaries.update((s.summary_id, s) for s in self.storage.summaries.get_summaries(missing))

    def load_messages(self, ids: list[int]) -> None:
        missing = [mid for mid in ids if mid not in self.messages]
        self.messages.update((m.message_id, m) for m in self.storage.conversations.get_messages(missing))

    def parent_ids(self, summary: Summary) -> list[str]:
        if summary.kind is not SummaryKind.CONDENSED:
            return []
        if summary.summary_id not in self.parents:
            self.parents[summary.summary_id] = self.storage.summaries.parent_ids(summary.summary_id)
        return self.parents[summary.summary_id]

    def sources(self, piece: Piece) -> list[Piece]:
        assert piece.summary_id is not None
        self.load_summaries([piece.summary_id])
        summary = self.summaries.get(piece.summary_id)
        if summary is None:
            return []
        if summary.kind is SummaryKind.CONDENSED:
            ids = self.parent_ids(summary)
            self.load_summaries(ids)
            found = [self.summaries[sid] for sid in ids if sid in self.summaries]
            return [Piece(None, s.summary_id, s.token_count) for s in found] if len(found) == len(ids) else []
        message_ids = self.storage.summaries.source_message_ids(summary.summary_id)
        self.load_messages(message_ids)
        found_messages = [self.messages[mid] for mid in message_ids if mid in self.messages]
        if len(found_messages) != len(message_ids):
            return []
        return [Piece(m.message_id, None, m.token_count) for m in found_messages]


def select_pieces(storage: ProjectStorage, conversation_id: int, *, budget: int, fresh_tail_count: int) -> Selection:
    """What ``assemble`` would show for ``budget``, without rendering it (the SessionStart restore uses it)."""
    return select(storage.context.list_items(conversation_id), budget, fresh_tail_count, _Dag(storage).sources)


def assemble(
    storage: ProjectStorage,
    conversation_id: int,
    *,
    budget: int,
    fresh_tail_count: int,
    text_filter: LargeTextFilter | None = None,
) -> AssembledContext:
    """Build the model's message list for ``conversation_id`` within ``budget`` tokens (``select``)."""
    dag = _Dag(storage)
    chosen = select(storage.context.list_items(conversation_id), budget, fresh_tail_count, dag.sources)
    summary_ids = [p.summary_id for p in chosen.pieces if p.summary_id is not None]
    message_ids = [p.message_id for p in chosen.pieces if p.message_id is not None]
    dag.load_summaries(summary_ids)
    dag.load_messages(message_ids)
    parts = storage.conversations.list_parts(message_ids) if message_ids else {}
    keep: LargeTextFilter = text_filter or (lambda _m, text: text)

    turns: list[Turn] = []
    for piece in chosen.pieces:
        if piece.summary_id is not None:
            summary = dag.summaries.get(piece.summary_id)
            if summary is not None:
                xml = summary_xml(summary, dag.parent_ids(summary))
                turns.append({"role": "user", "content": [{"type": "text", "text": xml}]})
        elif piece.message_id is not None and piece.message_id in dag.messages:
            message = dag.messages[piece.message_id]
            turns.extend(message_turns(message, parts.get(message.message_id, []), keep))
    return AssembledContext(
        conversation_id=conversation_id,
        budget=budget,
        messages=sanitize_tool_pairs(turns),
        token_estimate=chosen.tokens,
        fresh_tail_tokens=sum(p.tokens for p in chosen.pieces[chosen.tail_from:]),
        included_items=len(chosen.pieces),
        dropped_items=chosen.dropped_items,
        summary_ids=summary_ids,
        message_ids=message_ids,
        selection=chosen,
    )
