"""Which level of the summary DAG each part of a conversation is shown at, for a token budget.

The context list holds the coarsest view (the newest raw messages, older ranges
as their highest summaries). Selection starts there and spends what the
budget leaves on detail, newest first:

1. the fresh tail always (even over budget);
2. the newest older items that fit as they are (contiguous; older ones are dropped);
3. refinement from the newest shown item backwards: a summary is replaced by
   what it was made from (a condensed summary by the summaries it condensed,
   a leaf by its raw messages) whenever the extra tokens fit; the first one
   that does not fit keeps its summary, followed by as many of its newest
   sources as still fit, and refinement stops there.

So every budget shows the newest messages raw, older ranges at the finest
level that fits, in chronological order; a larger budget shows more raw detail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..compaction.plan import fresh_tail_start
from ..storage.models import ContextItem, ContextItemKind


@dataclass(frozen=True, slots=True)
class Piece:
    """One shown unit: a raw message (``message_id``) or a summary (``summary_id``)."""

    message_id: int | None
    summary_id: str | None
    tokens: int

    @classmethod
    def of(cls, item: ContextItem) -> Piece:
        if item.kind is ContextItemKind.MESSAGE:
            return cls(item.message_id, None, item.token_count)
        return cls(None, item.summary_id, item.token_count)


Sources = Callable[[Piece], list[Piece]]
"""The pieces a summary was made from, oldest first (``[]``: nothing finer is known)."""


@dataclass(frozen=True, slots=True)
class Selection:
    pieces: list[Piece]
    tail_from: int  # index in ``pieces`` where the fresh tail begins
    dropped_items: int  # context items not shown at any level

    @property
    def tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)


def select(items: Sequence[ContextItem], budget: int, fresh_tail_count: int, sources: Sources) -> Selection:
    """The pieces to show for ``budget`` tokens (see the module docstring)."""
    tail_start = fresh_tail_start(items, fresh_tail_count, lambda i: i.kind is ContextItemKind.MESSAGE)
    slack = budget - sum(i.token_count for i in items[tail_start:])
    first = tail_start
    while first > 0 and items[first - 1].token_count <= slack:
        slack -= items[first - 1].token_count
        first -= 1
    shown = [Piece.of(i) for i in items[first:tail_start]]
    index = len(shown) - 1
    while index >= 0:
        piece = shown[index]
        finer = sources(piece) if piece.summary_id is not None else []
        if not finer:
            index -= 1
            continue
        extra = sum(p.tokens for p in finer) - piece.tokens
        if extra <= slack:
            shown[index : index + 1] = finer
            slack -= extra
            index += len(finer) - 1
            continue
        newest: list[Piece] = []
        for source in reversed(finer):
            if source.tokens > slack:
                break
            newest.append(source)
            slack -= source.tokens
        shown[index + 1 : index + 1] = reversed(newest)
        break
    tail = [Piece.of(i) for i in items[tail_start:]]
    return Selection(shown + tail, len(shown), first)
