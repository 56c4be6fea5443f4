"""The last escalation level as a selectable summarizer: deterministic truncation with a visible marker.

It applies the same cut as the compaction ladder's own fallback (head and tail of
the segment around ``[Truncated for context management]``), so choosing
``summarizer.provider = "truncate"`` behaves exactly like that fallback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lcm_framework.plugin_api.summarize import TRUNCATION_MARKER, estimate_tokens
from lcm_framework.plugin_api.summarize import truncate_text as ladder_truncate

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.summarize import SummaryRequest

MARKER = TRUNCATION_MARKER
DEFAULT_TOKENS = 512


def truncate_text(text: str, target_tokens: int) -> str:
    """``text`` cut to about ``target_tokens`` tokens (chars/4) around the marker; short text unchanged."""
    return ladder_truncate(text.strip(), max(target_tokens, 16), estimate_tokens)


class TruncateSummarizer:
    """Never fails, never calls out; the same input gives the same output."""

    name = "truncate"

    def __init__(self, config: Config | None = None) -> None:
        self.limit = int(config.get("compaction.truncate_tokens")) if config is not None else DEFAULT_TOKENS

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def summarize(self, request: SummaryRequest) -> str:
        return truncate_text(request.segment, min(request.target_tokens, self.limit))
