"""What a summarizer plugin provides."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..config import Config


class Level(str, Enum):
    NORMAL = "normal"
    AGGRESSIVE = "aggressive"


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """One summarization call: rendered prompts plus the raw segment for offline summarizers."""

    system_prompt: str
    prompt: str
    segment: str
    target_tokens: int
    level: Level
    depth: int
    temperature: float


class Summarizer(Protocol):
    name: str

    def summarize(self, request: SummaryRequest) -> str:
        """Plain-text summary. Raise SummarizerError on provider failure; never log credentials."""
        ...

    def count_tokens(self, text: str) -> int:
        """Token estimate for this summarizer's model (characters/4 when unknown)."""
        ...


@dataclass(frozen=True, slots=True)
class Readiness:
    """What ``lcm doctor`` reports for a summarizer that defines the optional ``readiness(env)`` method
    (e.g. whether the credential its provider needs is set). ``status``: ok, warn or fail."""

    status: str
    detail: str
    fix: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


SummarizerFactory = Callable[["Config"], Summarizer]
