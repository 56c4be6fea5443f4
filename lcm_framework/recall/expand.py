"""``expand``: descend from a summary to its sources, level by level, under a token cap.

A condensed summary expands to the summaries it condensed, a leaf (with
``include_messages``) to its source messages verbatim. A message that started
sub-agent runs (its tool call, or that call's result) expands to the runs'
messages. Nodes are accumulated
breadth first (root at level 0); a node that would pass the cap is never cut:
expansion stops before it and is marked ``truncated``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..compaction.ids import message_ref
from ..storage.models import SummaryKind
from .refs import Ref, RefKind
from .subagents import runs_started_by

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    kind: str  # "summary" | "message"
    level: int
    via: str | None
    token_count: int
    content: str
    depth: int | None = None
    role: str | None = None


@dataclass(slots=True)
class Expansion:
    id: str
    project_id: str
    depth: int
    include_messages: bool
    token_cap: int
    nodes: list[Node] = field(default_factory=list)
    tokens: int = 0
    truncated: bool = False

    def messages(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "message"]


def _memory_sources(storage: ProjectStorage, ref: Ref) -> list[int] | None:
    """The messages a memory was promoted from; None when this project holds no such memory."""
    from ..storage.lineage import parse

    memory = storage.promoted_memory.get_memory(ref.memory_id)
    return list(parse(memory.metadata).messages) if memory is not None else None


def expand(
    storage: ProjectStorage, ref: Ref, *, depth: int = 1, include_messages: bool = False, token_cap: int = 20_000
) -> Expansion | None:
    """None when this project does not hold ``ref``."""
    result = Expansion(ref.text, storage.project_id, depth, include_messages, token_cap)
    if ref.kind in (RefKind.MESSAGE, RefKind.MEMORY):
        ids = [ref.message_id] if ref.kind is RefKind.MESSAGE else _memory_sources(storage, ref)
        found = storage.conversations.get_messages(ids) if ids is not None else []
        if ids is None or (ref.kind is RefKind.MESSAGE and not found):
            return None
        if _add_messages(result, found, 0, None) and depth >= 1:
            for link in runs_started_by(storage, found[:1]):
                if not _add_messages(result, storage.conversations.list_messages(link.child_conversation_id), 1,
                                     ref.text):
                    break
        return result
    if ref.kind is not RefKind.SUMMARY or storage.summaries.get_summary(ref.text) is None:
        return None
    frontier: list[tuple[str, str | None]] = [(ref.text, None)]
    level = 0
    while frontier:
        summaries = {s.summary_id: s for s in storage.summaries.get_summaries([sid for sid, _via in frontier])}
        next_frontier: list[tuple[str, str | None]] = []
        sources: list[tuple[str, list[int]]] = []
        for sid, via in frontier:
            summary = summaries.get(sid)
            if summary is None:
                continue
            node = Node(sid, "summary", level, via, summary.token_count, summary.content, depth=summary.depth)
            if not _take(result, node):
                return result
            if level >= depth:
                continue
            if summary.kind is SummaryKind.CONDENSED:
                next_frontier.extend((pid, sid) for pid in storage.summaries.parent_ids(sid))
            elif include_messages:
                sources.append((sid, storage.summaries.source_message_ids(sid)))
        for sid, ids in sources:
            if not _add_messages(result, storage.conversations.get_messages(ids), level + 1, sid):
                return result
        frontier = next_frontier
        level += 1
    return result


def _take(result: Expansion, node: Node) -> bool:
    """Add ``node`` unless it would pass the cap (then mark the expansion truncated)."""
    if result.tokens + node.token_count > result.token_cap:
        result.truncated = True
        return False
    result.nodes.append(node)
    result.tokens += node.token_count
    return True


def _add_messages(result: Expansion, messages: list[Message], level: int, via: str | None) -> bool:
    for message in messages:
        node = Node(message_ref(message.message_id), "message", level, via, message.token_count, message.content,
                    role=message.role.value)
        if not _take(result, node):
            return False
    return True
