"""The litellm summarizer through the real ``litellm.completion`` path; only the provider is faked.

Providers are faked with litellm's own ``mock_response`` or with a custom provider registered in
``litellm.custom_provider_map`` (``lcmfake/...`` models), so nothing touches the network.
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

import pytest
from lcm_summarizers.credentials import scrub, secret_values
from lcm_summarizers.llm import REQUEST_SLOTS, LitellmSummarizer, backoff_delay, is_retryable

from lcm_framework.app import App
from lcm_framework.config import Config
from lcm_framework.errors import ConfigError, SummarizerError
from lcm_framework.kernel.plugins import Plugins
from lcm_framework.summarize.tokens import load_litellm

from .conftest import request

KEY = "plain-secret-value-9f8e7d6c"


@pytest.fixture(scope="module")
def litellm() -> Any:
    return load_litellm()


class FakeProvider:
    """A scripted provider: each call pops a step (text or exception); records calls and concurrency."""

    def __init__(self, litellm: Any) -> None:
        outer = self
        self.script: list[Any] = []
        self.calls: list[dict[str, Any]] = []
        self.delay = 0.0
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()

        class Handler(litellm.CustomLLM):  # type: ignore[misc, name-defined]
            def completion(self, *args: Any, **kwargs: Any) -> Any:
                return outer.complete(kwargs)

        self.handler = Handler()

    def complete(self, kwargs: dict[str, Any]) -> Any:
        with self.lock:
            self.calls.append(kwargs)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            step = self.script.pop(0) if self.script else "fake summary"
        try:
            time.sleep(self.delay)
            if isinstance(step, Exception):
                raise step
            response = kwargs["model_response"]
            response.choices[0].message.content = step
            return response
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def fake(litellm: Any) -> Iterator[FakeProvider]:
    provider = FakeProvider(litellm)
    saved = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [*saved, {"provider": "lcmfake", "custom_handler": provider.handler}]
    try:
        yield provider
    finally:
        litellm.custom_provider_map = saved


def provider_error(litellm: Any, status: int, message: str) -> Exception:
    from litellm.llms.custom_llm import CustomLLMError

    return CustomLLMError(status_code=status, message=message)


@pytest.fixture
def config(make_config: Callable[..., Config]) -> Config:
    return make_config(LCM_SUMMARY_MODEL="openai/gpt-4o-mini", OPENAI_API_KEY=KEY, LCM_SUMMARIZER_MAX_RETRIES="3")


def summarizer(config: Config, **kwargs: Any) -> tuple[LitellmSummarizer, list[float]]:
    sleeps: list[float] = []
    return LitellmSummarizer(config, sleep=sleeps.append, backoff_base=0.01, **kwargs), sleeps


def test_mock_response_text(config: Config) -> None:
    llm, _ = summarizer(config, completion_kwargs={"mock_response": "  The user fixed src/app.py.  "})
    assert llm.summarize(request()) == "The user fixed src/app.py."
    assert llm.attempts == 1


def test_list_of_blocks_content_is_joined(config: Config, litellm: Any) -> None:
    response = litellm.ModelResponse()
    response.choices[0].message.content = [
        {"type": "text", "text": "first block"},
        {"type": "thinking", "thinking": "private reasoning"},
        {"type": "text", "text": "second block"},
    ]
    llm, _ = summarizer(config, completion_kwargs={"mock_response": response})
    assert llm.summarize(request()) == "first block\nsecond block"


def test_reasoning_only_answer_is_used_as_last_resort(config: Config, litellm: Any) -> None:
    response = litellm.ModelResponse()
    response.choices[0].message.content = None
    response.choices[0].message.reasoning_content = "reasoned summary"
    llm, _ = summarizer(config, completion_kwargs={"mock_response": response})
    assert llm.summarize(request()) == "reasoned summary"


def test_empty_output_raises_without_retry(config: Config) -> None:
    llm, sleeps = summarizer(config, completion_kwargs={"mock_response": ""})
    with pytest.raises(SummarizerError, match="returned no text"):
        llm.summarize(request())
    assert llm.attempts == 1 and sleeps == []


def test_provider_error_is_scrubbed_and_not_chained(config: Config, fake: FakeProvider, litellm: Any) -> None:
    fake.script = [provider_error(litellm, 401, f"invalid api key {KEY} (x-api-key: {KEY})")]
    llm, sleeps = summarizer(config)
    llm.model = "lcmfake/model"
    logs, out = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(logs)
    logging.getLogger().addHandler(handler)
    try:
        with redirect_stderr(out), redirect_stdout(out), pytest.raises(SummarizerError) as caught:
            llm.summarize(request())
    finally:
        logging.getLogger().removeHandler(handler)
    message = str(caught.value)
    assert "AuthenticationError" in message and "invalid api key" in message
    assert KEY not in message and KEY not in logs.getvalue() and KEY not in out.getvalue()
    assert caught.value.__cause__ is None and caught.value.__context__ is None
    assert llm.attempts == 1 and sleeps == []  # 401 is not retried


def test_mock_exception_is_retried_with_backoff(config: Config) -> None:
    llm, sleeps = summarizer(config, completion_kwargs={"mock_response": Exception(f"upstream 500 {KEY}")})
    with pytest.raises(SummarizerError, match="failed after 4 attempt") as caught:
        llm.summarize(request())
    assert KEY not in str(caught.value)
    assert llm.attempts == 4 and len(sleeps) == 3
    assert REQUEST_SLOTS.in_flight == 0  # failed requests give their slot back
    for attempt, delay in enumerate(sleeps):
        assert 0.01 * 2**attempt <= delay <= 0.01 * 2**attempt * 1.5


def test_transient_failure_then_success(config: Config, fake: FakeProvider, litellm: Any) -> None:
    fake.script = [provider_error(litellm, 503, "overloaded"), provider_error(litellm, 429, "slow down"), "done"]
    llm, sleeps = summarizer(config)
    llm.model = "lcmfake/model"
    assert llm.summarize(request()) == "done"
    assert llm.attempts == 3 and len(sleeps) == 2 and len(fake.calls) == 3


def test_request_carries_prompts_settings_and_api_base(
    make_config: Callable[..., Config], fake: FakeProvider
) -> None:
    config = make_config(
        LCM_SUMMARY_MODEL="lcmfake/local",
        LCM_SUMMARIZER_API_BASE="http://127.0.0.1:9/v1",
        LCM_SUMMARIZER_TIMEOUT_S="7",
    )
    llm = LitellmSummarizer(config)
    llm.summarize(request("the segment", target_tokens=300, temperature=0.1, prompt="PROMPT", system_prompt="SYS"))
    call = fake.calls[0]
    assert call["api_base"] == "http://127.0.0.1:9/v1"
    assert [m["content"] for m in call["messages"]] == ["SYS", "PROMPT"]
    assert call["optional_params"]["temperature"] == 0.1
    assert call["optional_params"]["max_tokens"] == 600
    assert float(call["timeout"]) == 7.0


def test_concurrency_limit_is_process_wide(make_config: Callable[..., Config], fake: FakeProvider) -> None:
    config = make_config(LCM_SUMMARY_MODEL="lcmfake/m", LCM_SUMMARIZER_CONCURRENCY="2")
    fake.delay = 0.15
    workers = [LitellmSummarizer(config) for _ in range(3)]  # separate instances share the limit
    threads = [threading.Thread(target=workers[i % 3].summarize, args=(request(),)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(fake.calls) == 6
    assert fake.max_in_flight == 2
    assert REQUEST_SLOTS.in_flight == 0


def test_missing_model_is_a_config_error(make_config: Callable[..., Config]) -> None:
    with pytest.raises(ConfigError, match=r"summarizer\.model or LCM_SUMMARY_MODEL"):
        LitellmSummarizer(make_config())


def test_provider_is_chosen_by_configuration_only(
    make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    plugins = make_plugins()
    assert App(make_config(), plugins).summarizer().name == "extractive"
    chosen = App(make_config(LCM_SUMMARY_MODEL="ollama/llama3.1"), plugins).summarizer()
    assert isinstance(chosen, LitellmSummarizer) and chosen.model == "ollama/llama3.1"
    assert App(make_config(LCM_SUMMARIZER="truncate"), plugins).summarizer().name == "truncate"


def test_retry_classification_and_backoff_bounds() -> None:
    class Status(Exception):
        def __init__(self, code: int) -> None:
            self.status_code = code

    assert is_retryable(Status(429)) and is_retryable(Status(503)) and not is_retryable(Status(400))
    assert is_retryable(TimeoutError()) and is_retryable(ConnectionError()) and not is_retryable(ValueError())
    assert backoff_delay(0, 1.0, rng=lambda: 0.0) == 1.0
    assert backoff_delay(3, 1.0, rng=lambda: 1.0) == 12.0
    assert backoff_delay(20, 1.0, rng=lambda: 0.0) == 30.0


def test_scrub_masks_env_values_and_key_shapes() -> None:
    secrets = secret_values({"OPENAI_API_KEY": KEY, "HOME": "/home/someone", "GH_TOKEN": "tok-123456789"})
    assert KEY in secrets and "/home/someone" not in secrets
    text = (
        f"key {KEY} bearer Bearer abc.def-123456 sk-ant-api03-AAAAAAAAAAAA "
        "api_key=hunter2hunter2 https://user:pass@host/x tok-123456789"
    )
    cleaned = scrub(text, secrets)
    for leaked in (KEY, "abc.def-123456", "sk-ant-api03", "hunter2", "user:pass", "tok-123456789"):
        assert leaked not in cleaned
    assert "api_key=***" in cleaned and "https://***@host/x" in cleaned
