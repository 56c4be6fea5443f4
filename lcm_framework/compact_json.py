"""Compact JSON of parsed transcript values: fast (orjson), spelled exactly as the standard library does.

Canonical JSON is hashed into ingest keys, so its bytes must never depend on
the encoder. orjson and ``json`` agree on everything the strict reader lets
through except how a float of small magnitude is written (``1e-05`` against
``0.00001``, ``1e-07`` against ``1e-7``). Every such number is a token
(right after ``:``, ``,`` or ``[``) holding ``0.0000`` or ``e-``; output with
such a token (rare in transcripts) is encoded again by the standard library.
Before searching, a value made mostly of long strings (a content block) is walked: a walk that meets no
float proves there is no such token, at a cost that does not grow with the length of the strings.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_EXPONENT = re.compile(rb"e-(?<=[0-9.]e-)")
_NUMBER_BYTES = frozenset(b"0123456789.")
_BEFORE_VALUE = frozenset(b":,[")
_SCALARS = frozenset({str, int, bool, type(None)})
_BYTES_PER_VISIT = 64
"""The walk visits at most one member or item per this many bytes of output (a visit costs about what
searching them does); a value whose top level alone takes half of that is searched without a walk."""
_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_IN_ORDER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps(value: Any, *, sort_keys: bool = False, float_free: bool = False) -> bytes:
    """UTF-8 compact JSON of a value the strict reader produced (no NaN or infinity), non-ASCII literal.
    ``float_free``: the caller knows ``value`` holds no float (nothing to check).

    Raises ``TypeError`` or ``ValueError`` (``UnicodeEncodeError`` for a lone surrogate) for what is not JSON.
    """
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except orjson.JSONEncodeError:
        data = None
    if data is None or (not float_free and not _float_free(value, len(data) // _BYTES_PER_VISIT)
                        and _small_float(data)):
        return (_SORTED if sort_keys else _IN_ORDER).encode(value).encode("utf-8")
    return data


def _float_free(value: Any, budget: int) -> bool:
    """True when ``value`` holds only str, int, bool, None and dicts and lists of them, found by visiting at
    most ``budget`` members and items; False when it holds anything else (a float) or the walk would be longer."""
    if type(value) is not dict and type(value) is not list:
        return type(value) in _SCALARS
    if len(value) * 2 > budget:
        return False
    stack = [value]
    while stack:
        node = stack.pop()
        children = node.values() if type(node) is dict else node
        budget -= len(children)
        if budget < 0:
            return False
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append(child)
            elif kind not in _SCALARS:
                return False
    return True


def _small_float(data: bytes) -> bool:
    """Whether a number token of ``data`` holds ``e-`` or ``0.0000``. The searches start with a literal,
    so they run at memchr speed; only their rare hits are checked byte by byte."""
    for found in _EXPONENT.finditer(data):
        if _token_start(data, found.start()):
            return True
    at = data.find(b"0.0000")
    while at != -1:
        if _token_start(data, at):
            return True
        at = data.find(b"0.0000", at + 1)
    return False


def _token_start(data: bytes, at: int) -> bool:
    """Whether the digits before ``at`` begin a JSON number (they follow ``:``, ``,``, ``[`` or the start)."""
    while at and data[at - 1] in _NUMBER_BYTES:
        at -= 1
    if at and data[at - 1] == 0x2D:  # "-"
        at -= 1
    return not at or data[at - 1] in _BEFORE_VALUE
