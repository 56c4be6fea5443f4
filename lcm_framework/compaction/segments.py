"""The text a summarizer sees: messages with timestamps, summaries with time-range headers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ..storage.models import Message, Summary

EMPTY_SEGMENT = "[no text content]"


def stamp(moment: datetime | None) -> str:
    return moment.isoformat(sep=" ")[:16] if moment else "unknown time"


def message_segment(messages: Sequence[Message], texts: Sequence[str]) -> str:
    """``[2026-02-17 07:37] user: text`` per message; ``texts`` are the model-facing contents."""
    lines = [f"[{stamp(m.created_at)}] {m.role.value}: {text}" for m, text in zip(messages, texts, strict=True)]
    return "\n\n".join(lines).strip() or EMPTY_SEGMENT


def summary_segment(summaries: Sequence[Summary]) -> str:
    """Each summary under a ``[earliest - latest]`` header."""
    blocks = [f"[{stamp(s.earliest_at)} - {stamp(s.latest_at)}]\n{s.content}" for s in summaries]
    return "\n\n".join(blocks).strip() or EMPTY_SEGMENT
