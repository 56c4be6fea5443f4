"""Pure planning over a conversation's context items: what the next pass would compact.

``ContextModel`` mirrors the stored context list once loaded, so a sweep reads
the list from storage once and then applies each of its own replacements
locally (ordinals shift exactly as ``ContextRepository.replace_range`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..storage.models import ContextItem, ContextItemKind

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry:
    """One context item plus the summary depth (``None`` for a raw message)."""

    message_id: int | None
    summary_id: str | None
    tokens: int
    depth: int | None

    @property
    def is_message(self) -> bool:
        return self.message_id is not None


@dataclass(frozen=True, slots=True)
class Span:
    """Entries ``start..end`` (list indexes, inclusive) to replace with one summary."""

    start: int
    end: int
    depth: int  # depth of the summary to create (0 = leaf)


@dataclass(frozen=True, slots=True)
class Limits:
    fresh_tail_count: int
    chunk_tokens: int
    leaf_min_fanout: int
    condensed_min_fanout: int


def fresh_tail_start(items: Sequence[T], fresh_tail_count: int, is_message: Callable[[T], bool]) -> int:
    """Index where the protected tail begins: the ``fresh_tail_count``-th raw message from the end.

    With fewer raw messages than that, the oldest raw message; with none (or a count of 0), the end.
    Scans from the end only as far as it must.
    """
    start = len(items)
    if fresh_tail_count <= 0:
        return start
    seen = 0
    for index in range(len(items) - 1, -1, -1):
        if is_message(items[index]):
            seen += 1
            start = index
            if seen == fresh_tail_count:
                break
    return start


class ContextModel:
    def __init__(self, entries: Sequence[Entry], ordinals: Sequence[int]) -> None:
        self.entries = list(entries)
        base = ordinals[0] if ordinals else 0
        dense = all(o == base + i for i, o in enumerate(ordinals))
        self._base = base
        self._ordinals: list[int] | None = None if dense else list(ordinals)

    @classmethod
    def from_items(cls, items: Sequence[ContextItem], depths: dict[str, int]) -> ContextModel:
        """Build from stored items; ``depths`` maps every summary id in context to its depth."""
        entries = [
            Entry(item.message_id, None, item.token_count, None)
            if item.kind is ContextItemKind.MESSAGE
            else Entry(None, item.summary_id, item.token_count, depths.get(item.summary_id or "", 0))
            for item in items
        ]
        return cls(entries, [item.ordinal for item in items])

    @property
    def total_tokens(self) -> int:
        return sum(e.tokens for e in self.entries)

    def tail_start(self, fresh_tail_count: int) -> int:
        """Index of the first protected entry: the last ``fresh_tail_count`` raw messages and after."""
        return fresh_tail_start(self.entries, fresh_tail_count, lambda e: e.message_id is not None)

    def raw_tokens_outside_tail(self, fresh_tail_count: int) -> int:
        return sum(e.tokens for e in self.entries[: self.tail_start(fresh_tail_count)] if e.is_message)

    def leaf_span(self, limits: Limits) -> Span | None:
        """The oldest contiguous run of raw messages outside the tail, capped at ``chunk_tokens``."""
        boundary = self.tail_start(limits.fresh_tail_count)
        start = next((i for i in range(boundary) if self.entries[i].is_message), None)
        if start is None:
            return None
        end, total = start, self.entries[start].tokens
        while end + 1 < boundary and self.entries[end + 1].is_message:
            if total + self.entries[end + 1].tokens > limits.chunk_tokens:
                break
            end += 1
            total += self.entries[end].tokens
        return Span(start, end, 0)

    def condensation_span(self, limits: Limits, max_source_depth: int | None = None) -> Span | None:
        """Oldest run of enough contiguous same-depth summaries at the shallowest such depth.

        The run is capped at ``chunk_tokens`` but always holds at least the fan-out.
        ``max_source_depth`` (inclusive) bounds which depths may be condensed.
        """
        boundary = self.tail_start(limits.fresh_tail_count)
        runs: dict[int, tuple[int, int]] = {}
        index = 0
        while index < boundary:
            entry = self.entries[index]
            if entry.is_message or entry.depth is None:
                index += 1
                continue
            end = index
            while end + 1 < boundary and not self.entries[end + 1].is_message and (
                self.entries[end + 1].depth == entry.depth
            ):
                end += 1
            fanout = limits.leaf_min_fanout if entry.depth == 0 else limits.condensed_min_fanout
            if end - index + 1 >= fanout and entry.depth not in runs:
                runs[entry.depth] = (index, end)
            index = end + 1
        eligible = sorted(d for d in runs if max_source_depth is None or d <= max_source_depth)
        if not eligible:
            return None
        depth = eligible[0]
        start, run_end = runs[depth]
        fanout = limits.leaf_min_fanout if depth == 0 else limits.condensed_min_fanout
        end, total = start, self.entries[start].tokens
        while end < run_end:
            nxt = self.entries[end + 1].tokens
            if end - start + 1 >= fanout and total + nxt > limits.chunk_tokens:
                break
            end += 1
            total += nxt
        return Span(start, end, depth + 1)

    def previous_summary_id(self, span: Span) -> str | None:
        """The newest summary before ``span`` (continuity for the prompt)."""
        for index in range(span.start - 1, -1, -1):
            if self.entries[index].summary_id is not None:
                return self.entries[index].summary_id
        return None

    def span_entries(self, span: Span) -> list[Entry]:
        return self.entries[span.start : span.end + 1]

    def ordinal(self, index: int) -> int:
        return self._base + index if self._ordinals is None else self._ordinals[index]

    def replace(self, span: Span, summary_id: str, tokens: int) -> None:
        """Apply what ``replace_range`` does to the stored list (later ordinals shift down)."""
        removed = span.end - span.start
        self.entries[span.start : span.end + 1] = [Entry(None, summary_id, tokens, span.depth)]
        if self._ordinals is not None:
            tail = [o - removed for o in self._ordinals[span.end + 1 :]]
            self._ordinals[span.start + 1 :] = tail
