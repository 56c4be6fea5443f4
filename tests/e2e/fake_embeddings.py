"""The OpenAI-compatible embeddings dialect of the fake model server (``POST .../embeddings``), as litellm's
``openai/`` provider sends it.

Each input text gets a deterministic vector of ``DIMENSIONS`` floats: word counts hashed into buckets, so texts
sharing words are near each other and the same text always gets the same vector. Takes no step of the script.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .dialects import Answer, Reply

PATH = "/embeddings"
DIMENSIONS = 16
WORD = re.compile(r"\w+")


def vector(text: str) -> list[float]:
    out = [0.0] * DIMENSIONS
    for word in WORD.findall(text.lower()):
        out[hashlib.sha256(word.encode()).digest()[0] % DIMENSIONS] += 1.0
    return out if any(out) else [1.0] + [0.0] * (DIMENSIONS - 1)


class EmbeddingsDialect:
    def handles(self, path: str) -> bool:
        return path.endswith(PATH)

    def takes_step(self, path: str) -> bool:
        return False

    def answer(self, path: str, body: Any, reply: Reply, call_id: str, input_tokens: int) -> Answer:
        body = body if isinstance(body, dict) else {}
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else [t for t in texts or [] if isinstance(t, str)]
        data = [{"object": "embedding", "index": n, "embedding": vector(t)} for n, t in enumerate(texts)]
        return "application/json", json.dumps({
            "object": "list", "data": data, "model": body.get("model") or "fake",
            "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}}).encode()


DIALECT = EmbeddingsDialect()
