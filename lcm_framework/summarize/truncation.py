"""Deterministic truncation: the compaction ladder's last level and the ``truncate`` summarizer share it."""

from __future__ import annotations

from collections.abc import Callable

TRUNCATION_MARKER = "[Truncated for context management]"


def truncate_text(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """Deterministic fallback: head and tail of ``text`` around the truncation marker.

    Text already within ``max_tokens`` is returned unchanged.
    """
    tokens = count(text)
    if tokens <= max_tokens:
        return text
    chars_per_token = len(text) / max(tokens, 1)
    budget = max(int((max_tokens - count(TRUNCATION_MARKER) - 2) * chars_per_token), 8)
    head = text[: budget * 3 // 4].rstrip()
    tail = text[len(text) - budget // 4 :].lstrip()
    return f"{head}\n{TRUNCATION_MARKER}\n{tail}"
