"""Small helpers shared by transcript format plugins (built-in and third-party).

They turn native values into what :class:`~lcm_framework.storage.models.NewMessage`
expects: token estimates (LCM's one estimator, re-exported), timezone-aware UTC
timestamps, and verbatim JSON for ``NewPart.raw_json``. None of them raises on
odd input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .. import compact_json
from ..summarize.tokens import estimate_tokens
from .lcm_context import LCM_CONTEXT_HEADER, is_lcm_context

__all__ = ["LCM_CONTEXT_HEADER", "estimate_tokens", "is_lcm_context", "parse_timestamp",
           "prompt_sha256", "string_fields", "to_json"]



def parse_timestamp(value: Any) -> datetime | None:
    """An ISO-8601 string (``Z`` allowed) or epoch seconds/milliseconds as aware UTC; None if unusable."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if abs(value) >= 1e11 else value
            return datetime.fromtimestamp(seconds, tz=UTC)
        if isinstance(value, str) and value:
            text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
            parsed = datetime.fromisoformat(text)
            return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def to_json(value: Any) -> str:
    """Compact JSON of a parsed native value, key order kept, non-ASCII kept literal."""
    return compact_json.dumps(value).decode("utf-8")


def string_fields(source: Mapping[str, Any], keys: Mapping[str, str]) -> dict[str, str]:
    """``{out_key: str(value)}`` for each ``native_key -> out_key`` whose value is a str, bool or number."""
    out: dict[str, str] = {}
    for native_key, out_key in keys.items():
        if native_key not in source:
            continue
        value = source[native_key]
        kind = type(value)
        if kind is str:
            out[out_key] = value
        elif kind is bool:
            out[out_key] = "true" if value else "false"
        elif kind is int or kind is float:
            out[out_key] = str(value)
    return out


def prompt_sha256(prompt: str) -> str:
    """What a sub-agent run and the call that started it are matched by: the SHA-256 of the prompt the
    call gave (which is the run's first user message)."""
    return hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
