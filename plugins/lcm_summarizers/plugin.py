"""Registers the built-in summarizers; each factory imports its module only when called."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import Setting, hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.summarize import Summarizer, SummarizerFactory

SETTINGS = (
    Setting("summarizer.model", str, None, "litellm model string, e.g. anthropic/claude-3-5-haiku-latest.",
            env=("LCM_SUMMARY_MODEL",), nullable=True),
    Setting("summarizer.api_base", str, None, "Base URL of an OpenAI-compatible or Ollama server.", nullable=True),
    Setting("summarizer.timeout_s", float, 60.0, "Per-request timeout.", minimum=1),
    Setting("summarizer.max_retries", int, 3, "Retries with exponential backoff.", minimum=0, maximum=10),
    Setting("summarizer.concurrency", int, 4, "Concurrent summarizer requests.", minimum=1, maximum=64),
)


@hookimpl
def lcm_register_settings(register: Callable[[Setting], None]) -> None:
    for setting in SETTINGS:
        register(setting)


def auto(config: Config) -> Summarizer:
    """``summarizer.provider = auto``: litellm when ``summarizer.model`` is set, else extractive."""
    return llm(config) if config.get("summarizer.model") else extractive(config)


def llm(config: Config) -> Summarizer:
    from .llm import LitellmSummarizer

    return LitellmSummarizer(config)


def extractive(config: Config) -> Summarizer:
    from .extractive import ExtractiveSummarizer

    return ExtractiveSummarizer(config)


def truncate(config: Config) -> Summarizer:
    from .truncate import TruncateSummarizer

    return TruncateSummarizer(config)


@hookimpl(trylast=True)
def lcm_register_summarizers(register: Callable[[str, SummarizerFactory], None]) -> None:
    register("auto", auto)
    register("litellm", llm)
    register("extractive", extractive)
    register("truncate", truncate)
