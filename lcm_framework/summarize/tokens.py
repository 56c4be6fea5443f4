"""Token counting: litellm's counter for a model when it works offline, characters/4 otherwise.

Also the one place that imports litellm, so every caller gets it configured the
same way: the bundled model cost map (no fetch at import), no debug output.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_IMPORT_LOCK = threading.Lock()
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm")
# Tokenizer families litellm would fetch from the Hugging Face hub (anthropic and
# deepseek tokenizers ship inside litellm, everything else uses bundled tiktoken).
_DOWNLOADING_KINDS = frozenset({"cohere", "llama2", "llama3"})


def estimate_tokens(text: str) -> int:
    """The fast estimate: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def load_litellm() -> Any:
    """Import litellm lazily with the local cost map and its logging silenced."""
    import logging

    with _IMPORT_LOCK:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        for name in _LITELLM_LOGGERS:
            logging.getLogger(name).setLevel(logging.CRITICAL)
        # pydantic warns about litellm's own TypedDicts (at import and when a provider module first
        # loads); nothing a user can act on.
        warnings.filterwarnings("ignore", message=r"Items? .* `ReadOnly` qualifier", category=UserWarning)
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        for name in _LITELLM_LOGGERS:
            logger = logging.getLogger(name)
            logger.setLevel(logging.CRITICAL)
            logger.propagate = False
        return litellm


def _needs_download(litellm: Any, model: str) -> bool:
    kind_of = getattr(getattr(litellm, "utils", None), "huggingface_tokenizer_kind", None)
    if kind_of is not None:
        try:
            return kind_of(model) in _DOWNLOADING_KINDS
        except Exception:
            return True
    lowered = model.lower()
    return any(marker in lowered for marker in ("llama", "command-r", "replicate"))


@lru_cache(maxsize=32)
def model_counter(model: str) -> Callable[[str], int] | None:
    """litellm's counter for ``model`` if it works without the network, else None (cached per model)."""
    litellm = load_litellm()
    if _needs_download(litellm, model):
        return None

    def count(text: str) -> int:
        return int(litellm.token_counter(model=model, text=text))

    try:
        count("probe")
    except Exception:
        return None
    return count


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens of ``text`` for ``model`` (litellm, offline); characters/4 without a model or on failure."""
    if not text:
        return 0
    counter = model_counter(model) if model else None
    if counter is None:
        return estimate_tokens(text)
    try:
        return counter(text)
    except Exception:
        return estimate_tokens(text)
