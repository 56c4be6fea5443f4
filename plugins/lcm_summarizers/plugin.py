"""Registers the built-in summarizers; each factory imports its module only when called."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.summarize import Summarizer, SummarizerFactory


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
    register("litellm", llm)
    register("extractive", extractive)
    register("truncate", truncate)
