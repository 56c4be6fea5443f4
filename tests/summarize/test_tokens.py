"""Token counting: litellm's counter for the configured model, offline; characters/4 otherwise."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest
from lcm_summarizers.llm import LitellmSummarizer

from lcm_framework.config import Config
from lcm_framework.summarize.tokens import count_tokens, estimate_tokens, model_counter

TEXT = "def compact(conversation_id: int) -> None:\n    raise SummarizerError('provider failed')\n" * 20


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_estimate_is_chars_over_four() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert count_tokens(TEXT) == estimate_tokens(TEXT)
    assert count_tokens("") == 0


@pytest.mark.parametrize("model", ["gpt-4o-mini", "openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"])
def test_model_counter_works_offline(model: str, no_network: None) -> None:
    counted = count_tokens(TEXT, model)
    assert counted > 0 and counted != estimate_tokens(TEXT)
    assert model_counter(model) is not None


def test_models_whose_tokenizer_needs_a_download_fall_back(no_network: None) -> None:
    assert model_counter("ollama/llama-3-8b") is None
    assert count_tokens(TEXT, "ollama/llama-3-8b") == estimate_tokens(TEXT)


def test_litellm_summarizer_counts_with_its_model(make_config: Callable[..., Config], no_network: None) -> None:
    llm = LitellmSummarizer(make_config(LCM_SUMMARY_MODEL="openai/gpt-4o-mini"))
    assert llm.count_tokens(TEXT) == count_tokens(TEXT, "openai/gpt-4o-mini")
