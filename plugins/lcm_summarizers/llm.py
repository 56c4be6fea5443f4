"""The ``litellm`` summarizer: any provider litellm supports, chosen by a model string.

Credentials come from the providers' usual environment variables and are
never logged, printed or carried in an error (messages are scrubbed and the
provider's exception is not chained). Each request has a timeout; retryable
failures (rate limits, timeouts, connection and 5xx errors) are retried with
exponential backoff plus jitter; a process-wide counter bounds concurrent
requests (``summarizer.concurrency``).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import ConfigError, SummarizerError, SummarizerUnavailableError
from lcm_framework.plugin_api.summarize import count_tokens, load_litellm

from .credentials import scrub, secret_values
from .normalize import response_text

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.summarize import SummaryRequest

BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_RETRYABLE_NAMES = frozenset(
    {"RateLimitError", "Timeout", "APITimeoutError", "APIConnectionError", "ServiceUnavailableError",
     "InternalServerError", "TimeoutError", "ConnectionError"}
)


class RequestSlots:
    """Process-wide count of in-flight requests; each caller waits until fewer than its limit are running."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.in_flight = 0

    @contextmanager
    def hold(self, limit: int) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: self.in_flight < limit)
            self.in_flight += 1
        try:
            yield
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()


REQUEST_SLOTS = RequestSlots()


def is_retryable(exc: BaseException) -> bool:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in _RETRYABLE_STATUS
    return any(cls.__name__ in _RETRYABLE_NAMES for cls in type(exc).__mro__)


def backoff_delay(attempt: int, base: float = BACKOFF_BASE_S, rng: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): base * 2**attempt, capped, plus up to 50% jitter."""
    delay = min(base * (2**attempt), BACKOFF_CAP_S)
    return delay * (1 + 0.5 * rng())


class LitellmSummarizer:
    """Summaries from ``litellm.completion``; ``completion_kwargs`` are passed through on every call.

    ``completion_kwargs`` exists for tests (litellm's ``mock_response``) and for
    provider options that have no configuration key; the call path is the same.
    """

    name = "litellm"

    def __init__(
        self,
        config: Config,
        *,
        completion_kwargs: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff_base: float = BACKOFF_BASE_S,
    ) -> None:
        model = config.get("summarizer.model")
        if not model:
            raise ConfigError(
                "summarizer.provider=litellm needs a model: set summarizer.model or LCM_SUMMARY_MODEL "
                "(e.g. anthropic/claude-3-5-haiku-latest, openai/gpt-4o-mini, ollama/llama3.1)"
            )
        self.model = str(model)
        self.api_base: str | None = config.get("summarizer.api_base")
        self.timeout = float(config.get("summarizer.timeout_s"))
        self.max_retries = int(config.get("summarizer.max_retries"))
        self.concurrency = int(config.get("summarizer.concurrency"))
        self.extra = dict(completion_kwargs or {})
        self.sleep = sleep
        self.backoff_base = backoff_base
        self._secrets = secret_values(config.env, [str(self.extra.get("api_key") or "")])
        self.attempts = 0
        """Provider calls made by this instance (retries included)."""
        self._count_lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return count_tokens(text, self.model)

    def summarize(self, request: SummaryRequest) -> str:
        litellm = load_litellm()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system_prompt},
                {"role": "user", "content": request.prompt},
            ],
            "temperature": request.temperature,
            "max_tokens": max(request.target_tokens * 2, 256),
            "timeout": self.timeout,
            "max_retries": 0,
            "num_retries": 0,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        kwargs.update(self.extra)
        failure = ""
        for attempt in range(self.max_retries + 1):
            try:
                with REQUEST_SLOTS.hold(self.concurrency):
                    with self._count_lock:
                        self.attempts += 1
                    response = litellm.completion(**kwargs)
            except Exception as exc:  # provider errors come in many types; all become SummarizerError
                failure = f"{type(exc).__name__}: {exc}"
                if attempt < self.max_retries and is_retryable(exc):
                    self.sleep(backoff_delay(attempt, self.backoff_base))
                    continue
                break
            return self._text(response)
        raise SummarizerUnavailableError(self._scrubbed(f"failed after {attempt + 1} attempt(s): {failure}"))

    def _text(self, response: Any) -> str:
        normalized = response_text(response)
        if not normalized.text:
            kinds = ", ".join(sorted(set(normalized.block_types))) or "none"
            raise SummarizerError(self._scrubbed(f"returned no text (block types: {kinds})"))
        return normalized.text

    def _scrubbed(self, message: str) -> str:
        text = f"summarizer litellm (model {self.model}) {message}"
        return scrub(text, self._secrets)[:600]
