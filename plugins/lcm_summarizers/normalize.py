"""Provider response shapes -> plain text.

Handles OpenAI chat (``choices[0].message.content`` as text or a list of
parts), Anthropic (``content`` blocks of type ``text``), the Responses API
(``output_text``, ``output[].content[]``), nested ``content``/``summary``
blocks, and reasoning-only answers (``reasoning_content``, ``thinking``
blocks), which are used only when no answer text exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_TEXT_KEYS = ("text", "output_text", "content", "message", "output", "choices", "summary")
_REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
_REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking", "summary_text"})
_MAX_DEPTH = 12


@dataclass
class Normalized:
    text: str
    block_types: list[str] = field(default_factory=list)
    from_reasoning: bool = False


def response_text(response: Any) -> Normalized:
    """The answer text of ``response`` (any litellm or provider shape); reasoning only as a fallback."""
    data = _plain(response)
    types: list[str] = []
    answer = _collect(data, types, reasoning=False, depth=0)
    if answer.strip():
        return Normalized(answer.strip(), types)
    thought = _collect(data, [], reasoning=True, depth=0)
    return Normalized(thought.strip(), types, from_reasoning=bool(thought.strip()))


def _plain(value: Any) -> Any:
    """Pydantic models and plain objects -> dicts/lists (litellm responses are pydantic models)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(warnings=False)
        except TypeError:
            return dump()
    if isinstance(value, (str, bytes, int, float, bool, Mapping, list, tuple)) or value is None:
        return value
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return value


def _collect(value: Any, types: list[str], *, reasoning: bool, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return ""
    value = _plain(value)
    if isinstance(value, str):
        return "" if reasoning else value
    if isinstance(value, (list, tuple)):
        parts = (_collect(item, types, reasoning=reasoning, depth=depth + 1) for item in value)
        return "\n".join(part for part in parts if part.strip())
    if not isinstance(value, Mapping):
        return ""
    kind = value.get("type")
    if isinstance(kind, str):
        types.append(kind)
    if reasoning:
        return _reasoning(value, types, depth)
    if isinstance(kind, str) and kind in _REASONING_TYPES:
        return ""
    if "choices" in value and isinstance(value["choices"], (list, tuple)) and value["choices"]:
        return _collect(value["choices"][0], types, reasoning=False, depth=depth + 1)
    for key in _TEXT_KEYS:
        if key in value and value[key] is not None:
            text = _collect(value[key], types, reasoning=False, depth=depth + 1)
            if text.strip():
                return text
    return ""


def _reasoning(value: Mapping[str, Any], types: list[str], depth: int) -> str:
    for key in _REASONING_KEYS:
        found = value.get(key)
        if isinstance(found, str) and found.strip():
            return found
    kind = value.get("type")
    if kind in _REASONING_TYPES:
        for key in ("thinking", "text", "summary", "content"):
            found = value.get(key)
            text = found if isinstance(found, str) else _collect(found, [], reasoning=False, depth=depth + 1)
            if text.strip():
                return text
    for key in ("choices", "message", "content", "output", "summary", *_REASONING_KEYS):
        nested = value.get(key)
        if isinstance(nested, (Mapping, list, tuple)) or hasattr(nested, "__dict__"):
            if key == "choices" and isinstance(nested, (list, tuple)) and nested:
                nested = nested[0]
            text = _collect(nested, types, reasoning=True, depth=depth + 1)
            if text.strip():
                return text
    return ""
