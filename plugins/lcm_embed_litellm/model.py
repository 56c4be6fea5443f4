"""Vectors from ``litellm.embedding``: any provider's embedding model, for users who want one over the local one.

Not local (``local = False``): every message stored and every query goes to the provider. The name recorded
with the vectors is ``litellm:<model>``, so another model is another embedder (its vectors replace the old).
The dimensions are the model's, learnt from one probe request on first use. A provider error is an
``EmbeddingUnavailableError`` naming the model and the error's type (not its text, which may quote a key).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api.embedding import EmbeddingUnavailableError
from lcm_framework.plugin_api.summarize import load_litellm

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config

BATCH = 128
"""Texts per request."""


class LitellmEmbedder:
    local = False

    def __init__(self, model: str, *, api_base: str | None = None, timeout_s: float = 30.0) -> None:
        self.model = model
        self.name = f"litellm:{model}"
        self._api_base = api_base
        self._timeout_s = timeout_s
        self._dimensions: int | None = None

    @classmethod
    def from_config(cls, config: Config) -> LitellmEmbedder:
        model = config.get("embedding.model")
        if not model:
            raise EmbeddingUnavailableError("recall.embedder=litellm needs embedding.model "
                                            "(e.g. lcm config set embedding.model openai/text-embedding-3-small)")
        api_base = config.get("embedding.api_base")
        return cls(str(model), api_base=str(api_base) if api_base else None,
                   timeout_s=float(config.get("embedding.timeout_s")))

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self._dimensions = len(self.embed(["dimensions"])[0])
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order (an empty text is sent as one space)."""
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            out += [_unit(v) for v in self._request([t or " " for t in texts[start:start + BATCH]])]
        if out and self._dimensions is None:
            self._dimensions = len(out[0])
        return out

    def _request(self, texts: list[str]) -> list[list[float]]:
        litellm = load_litellm()
        kwargs: dict[str, Any] = {"model": self.model, "input": texts, "timeout": self._timeout_s}
        if self._api_base:
            kwargs["api_base"] = self._api_base
        try:
            response = litellm.embedding(**kwargs)
            rows = sorted(response.data, key=lambda d: _get(d, "index"))
            vectors = [[float(x) for x in _get(d, "embedding")] for d in rows]
        except Exception as exc:  # litellm raises its own and the provider's errors
            status = getattr(exc, "status_code", None)  # the message may quote a credential: left out
            raise EmbeddingUnavailableError(f"the embedding model {self.model} failed ({type(exc).__name__}"
                                            + (f", status {status}" if status else "") + ")") from None
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) > 1:
            raise EmbeddingUnavailableError(f"the embedding model {self.model} answered {len(vectors)} vectors "
                                            f"for {len(texts)} texts")
        return vectors


def _get(item: Any, key: str) -> Any:
    return item[key] if isinstance(item, dict) else getattr(item, key)


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 and math.isfinite(norm) else [0.0] * len(vector)
