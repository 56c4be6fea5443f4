"""Three-level escalation: normal prompt, aggressive prompt, deterministic truncation.

A level is accepted only when its output is non-empty and has fewer tokens
than the input. A summarizer failure (``SummarizerError`` or any other
exception) falls to the next level, so compaction always makes progress;
only ``SummarizerUnavailableError`` (the service gave no answer at all) is
raised to the engine, which switches to the offline summarizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from ..errors import SummarizerUnavailableError
from ..summarize.contracts import Level, SummaryRequest
from ..summarize.truncation import truncate_text

if TYPE_CHECKING:
    from ..summarize.contracts import Summarizer
    from ..summarize.prompts import PromptRenderer

AGGRESSIVE_TEMPERATURE = 0.1


class Outcome(str, Enum):
    NORMAL = "normal"
    AGGRESSIVE = "aggressive"
    TRUNCATED = "truncated"


@dataclass(frozen=True, slots=True)
class LadderResult:
    text: str
    outcome: Outcome
    input_tokens: int
    output_tokens: int
    failures: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class LadderSettings:
    target_tokens: int
    truncate_tokens: int
    temperature: float


def summarize_with_escalation(
    summarizer: Summarizer,
    renderer: PromptRenderer,
    *,
    segment: str,
    previous_context: str,
    depth: int,
    settings: LadderSettings,
) -> LadderResult:
    """Summarize ``segment`` for a summary of ``depth`` (0 = leaf), escalating on bad output."""
    from ..summarize.prompts import prompt_for_depth

    input_tokens = summarizer.count_tokens(segment)
    failures: list[str] = []
    for level, outcome in ((Level.NORMAL, Outcome.NORMAL), (Level.AGGRESSIVE, Outcome.AGGRESSIVE)):
        aggressive = level is Level.AGGRESSIVE
        target = max(settings.target_tokens // 2, 16) if aggressive else settings.target_tokens
        variables = {
            "segment": segment,
            "previous_context": previous_context,
            "depth": depth,
            "target_tokens": target,
            "level": level,
        }
        try:
            request = SummaryRequest(
                system_prompt=renderer.render("system", **variables),
                prompt=renderer.render(prompt_for_depth(depth, level), **variables),
                segment=segment,
                target_tokens=target,
                level=level,
                depth=depth,
                temperature=AGGRESSIVE_TEMPERATURE if aggressive else settings.temperature,
            )
            text = (summarizer.summarize(request) or "").strip()
        except SummarizerUnavailableError:
            raise
        except Exception as exc:  # a provider failure must never break compaction
            failures.append(f"{level.value}: {type(exc).__name__}: {exc}"[:300])
            continue
        if not text:
            failures.append(f"{level.value}: empty output")
            continue
        output_tokens = summarizer.count_tokens(text)
        if output_tokens >= input_tokens:
            failures.append(f"{level.value}: output ({output_tokens} tokens) not smaller than input ({input_tokens})")
            continue
        return LadderResult(text, outcome, input_tokens, output_tokens, tuple(failures))
    return truncation(segment, settings, summarizer, *failures)


def truncation(segment: str, settings: LadderSettings, summarizer: Summarizer, *failures: str) -> LadderResult:
    """The last level: deterministic truncation of ``segment``."""
    text = truncate_text(segment, settings.truncate_tokens, summarizer.count_tokens)
    return LadderResult(text, Outcome.TRUNCATED, summarizer.count_tokens(segment), summarizer.count_tokens(text),
                        tuple(f[:300] for f in failures))
