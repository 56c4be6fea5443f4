"""Request-body reading and validation: size-limited JSON objects checked field by field."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BODY_BYTES = 1024 * 1024
MAX_DEPTH = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


class BadRequest(Exception):
    """A request the daemon refuses with a 4xx status and a clear message."""

    def __init__(self, message: str, *, status: int = 400, code: str = "bad_request") -> None:
        self.status = status
        self.code = code
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: type  # str, int, bool, dict or Path (absolute path given as text)
    required: bool = False
    default: Any = None
    choices: Sequence[str] = ()
    minimum: int | None = None


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object of text the storage can hold; ``BadRequest`` otherwise (never another error)."""
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BadRequest(f"request body nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    check_text(data)
    return data


def check_text(value: Any) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH`` and text no UTF-8 encoder takes (a lone surrogate such as
    ``"\\ud800"``, valid JSON but not valid Unicode), in keys and values alike (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise BadRequest("request body holds a lone surrogate (\\ud800-\\udfff): not valid Unicode text")
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise BadRequest(f"request body nested deeper than {MAX_DEPTH} levels")
        children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


def validate(data: Mapping[str, Any], fields: Sequence[Field], *, allow_extra: bool = False) -> dict[str, Any]:
    """Return the checked values; unknown keys are refused unless ``allow_extra``."""
    known = {f.name for f in fields}
    extra = sorted(set(data) - known)
    if extra and not allow_extra:
        raise BadRequest(f"unknown field(s): {', '.join(extra)} (allowed: {', '.join(sorted(known))})")
    out: dict[str, Any] = dict(data) if allow_extra else {}
    for f in fields:
        if f.name not in data or data[f.name] is None:
            if f.required:
                raise BadRequest(f"missing required field {f.name!r}")
            out[f.name] = f.default
            continue
        out[f.name] = _check(f, data[f.name])
    return out


def _check(f: Field, value: Any) -> Any:
    if f.kind is Path:
        if not isinstance(value, str) or not value:
            raise BadRequest(f"field {f.name!r} must be an absolute path (text)")
        path = Path(value)
        if "\x00" in value or not path.is_absolute():
            raise BadRequest(f"field {f.name!r} must be an absolute path")
        return path
    if f.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadRequest(f"field {f.name!r} must be an integer")
        if f.minimum is not None and value < f.minimum:
            raise BadRequest(f"field {f.name!r} must be >= {f.minimum}")
        return value
    if not isinstance(value, f.kind):
        raise BadRequest(f"field {f.name!r} must be of type {f.kind.__name__}")
    if isinstance(value, str):
        if "\x00" in value:
            raise BadRequest(f"field {f.name!r} contains U+0000")
        if f.choices and value not in f.choices:
            raise BadRequest(f"field {f.name!r} must be one of: {', '.join(f.choices)}")
    return value
