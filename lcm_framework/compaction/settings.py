"""Compaction tunables (``compaction.*``) and the report a compaction run returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from .plan import Limits

if TYPE_CHECKING:
    from ..config import Config


class Mode(str, Enum):
    INCREMENTAL = "incremental"
    FULL = "full"
    UNTIL_UNDER = "until_under"


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    fresh_tail_count: int = 8
    leaf_chunk_tokens: int = 20_000
    leaf_target_tokens: int = 1_000
    condensed_target_tokens: int = 1_800
    leaf_min_fanout: int = 8
    condensed_min_fanout: int = 4
    incremental_max_depth: int = 0
    truncate_tokens: int = 512
    temperature: float = 0.2
    large_file_token_threshold: int = 25_000
    max_pending_passes: int = 2000  # leaf passes of a sweep sharing one write, at most (not a config key)

    @classmethod
    def from_config(cls, config: Config) -> CompactionSettings:
        def get(key: str) -> int:
            return int(config.get(f"compaction.{key}"))

        return cls(
            fresh_tail_count=get("fresh_tail_count"),
            leaf_chunk_tokens=get("leaf_chunk_tokens"),
            leaf_target_tokens=get("leaf_target_tokens"),
            condensed_target_tokens=get("condensed_target_tokens"),
            leaf_min_fanout=get("leaf_min_fanout"),
            condensed_min_fanout=get("condensed_min_fanout"),
            incremental_max_depth=get("incremental_max_depth"),
            truncate_tokens=get("truncate_tokens"),
            temperature=float(config.get("summarizer.temperature")),
            large_file_token_threshold=get("large_file_token_threshold"),
        )

    @property
    def limits(self) -> Limits:
        return Limits(
            fresh_tail_count=self.fresh_tail_count,
            chunk_tokens=self.leaf_chunk_tokens,
            leaf_min_fanout=self.leaf_min_fanout,
            condensed_min_fanout=self.condensed_min_fanout,
        )


@dataclass(slots=True)
class CompactionReport:
    """What one compaction run of one conversation did."""

    conversation_id: int
    session_id: str
    mode: Mode
    dry_run: bool = False
    action_taken: bool = False
    skipped_no_gain: int = 0
    """Spans left raw because no summary of them would be smaller than the span itself."""
    busy: bool = False
    created_by_depth: dict[int, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    tokens_before: int = 0
    tokens_after: int = 0
    passes: int = 0
    failures: list[str] = field(default_factory=list)
    fallback: str | None = None
    """Set when the configured summarizer was unavailable and the offline one took over (with the reason)."""
    summarizer_seconds: float = 0.0
    storage_seconds: float = 0.0

    @property
    def summaries_created(self) -> int:
        return sum(self.created_by_depth.values())

    def note_pass(self, depth: int, outcome: str, failures: tuple[str, ...]) -> None:
        self.passes += 1
        self.action_taken = True
        self.created_by_depth[depth] = self.created_by_depth.get(depth, 0) + 1
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
        self.failures.extend(failures)
