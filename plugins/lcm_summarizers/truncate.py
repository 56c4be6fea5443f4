"""The last escalation level: deterministic truncation with a visible marker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lcm_framework.summarize.tokens import estimate_tokens

if TYPE_CHECKING:
    from lcm_framework.config import Config
    from lcm_framework.summarize.contracts import SummaryRequest

MARKER = "[Truncated for context management]"
DEFAULT_TOKENS = 512


def truncate_text(text: str, target_tokens: int) -> str:
    """``text`` cut to about ``target_tokens`` tokens (at a line or word boundary) plus the marker."""
    text = text.strip()
    budget = max(target_tokens, 16) * 4
    if len(text) <= budget:
        return text
    room = budget - len(MARKER) - 2
    cut = text[:room]
    for boundary in ("\n", " "):
        at = cut.rfind(boundary)
        if at >= room // 2:
            cut = cut[:at]
            break
    return cut.rstrip() + "\n" + MARKER


class TruncateSummarizer:
    """Keeps the head of the segment: never fails, never calls out, same input gives same output."""

    name = "truncate"

    def __init__(self, config: Config | None = None) -> None:
        self.limit = int(config.get("compaction.truncate_tokens")) if config is not None else DEFAULT_TOKENS

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def summarize(self, request: SummaryRequest) -> str:
        return truncate_text(request.segment, min(request.target_tokens, self.limit))
