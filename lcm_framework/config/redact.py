"""What a configuration error may print of the text it refuses: never a secret key's value, nor a value (or
key) that looks like a secret or is too long to read, and no control character."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any

from ..secret_shapes import looks_like_secret

MAX_SHOWN = 64
"""Longer refused text is not shown (a pasted token, a file's contents), only its length."""
_LARGEST_SHOWN_INT_BITS = 256


def withheld(text: str, *, secret: bool = False) -> str | None:
    """Why ``text`` must not appear in an error (``secret``: it is a secret key's value), or None."""
    if secret:
        return "secret key"
    if len(text) > MAX_SHOWN:
        return f"{len(text)} characters"
    if looks_like_secret(text):
        return "looks like a secret"
    return None


def for_error(raw: Any, *, secret: bool = False) -> str:
    """How an error names the refused ``raw``: quoted text or the number when harmless, the kind of a TOML
    table, array or date, else ``value rejected (not shown: <why>)``."""
    if isinstance(raw, str):
        text = repr(raw)  # quoted, control characters escaped
    elif isinstance(raw, bool):
        text = "true" if raw else "false"
    elif isinstance(raw, int) and raw.bit_length() > _LARGEST_SHOWN_INT_BITS:
        text = f"an integer of {raw.bit_length()} bits"
    elif isinstance(raw, int | float):
        text = repr(raw)
    else:
        text = ("a table" if isinstance(raw, dict) else "an array" if isinstance(raw, list)
                else "a date or time" if isinstance(raw, date | datetime | time) else "a value")
        return text if not secret else "value rejected (not shown: secret key)"
    why = withheld(raw if isinstance(raw, str) else text, secret=secret)
    return text if why is None else f"value rejected (not shown: {why})"
