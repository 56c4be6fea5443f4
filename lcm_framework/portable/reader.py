"""Read a portable records stream defensively: whatever a line holds, the answer is a checked record or a
``RecordFormatError`` naming the line (never a traceback).

A line must be UTF-8 JSON without ``NaN``/``Infinity``, lone surrogates or nesting deeper than
``MAX_DEPTH``; the header's ``version`` a positive integer this LCM reads; a record must carry the
``digest`` of its content (required: a record without one is refused) and have the shape ``schema``
defines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import IO, Any

from . import schema
from .records import FORMAT, VERSION, RecordFormatError, digest

MAX_DEPTH = 64
MAX_LINE_BYTES = 256 * 1024 * 1024
"""The longest record line read (a conversation record holds the whole conversation)."""
"""Deepest nesting of arrays and objects a line may hold (records need 5; ``lineage.extra`` gets the rest)."""


def lines(stream: IO[bytes], max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line (numbered from 1); RecordFormatError for a line that is not UTF-8 or
    longer than ``max_line_bytes`` (read no further than that: an endless line costs no more memory)."""
    for number, raw in enumerate(iter(lambda: stream.readline(max_line_bytes + 1), b""), start=1):
        if len(raw) > max_line_bytes:
            raise RecordFormatError(f"line {number} is longer than {max_line_bytes:,} bytes")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordFormatError(f"line {number} is not UTF-8 text") from None


def read_header(line: str) -> dict[str, Any]:
    """The header (line 1); RecordFormatError when it is not one, or of a version this LCM does not read."""
    try:
        head = _load(line)
    except RecordFormatError:
        head = None
    version = head.get("version") if isinstance(head, dict) else None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise RecordFormatError(f"not an LCM records file (the first line must be a {FORMAT!r} header)")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise RecordFormatError("line 1: the header's version must be a positive integer")
    if version > VERSION:
        raise RecordFormatError(
            f"this file is format version {version}, newer than the version {VERSION} this LCM reads: "
            "upgrade LCM to import it")
    return head


def read_record(line: str, number: int) -> dict[str, Any]:
    """The record on line ``number``, checked (see the module docstring)."""
    try:
        record = _load(line)
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise RecordFormatError("not a record (an object with a type)")
        if "digest" not in record:
            raise RecordFormatError("the record has no digest (every record carries one)")
        if record["digest"] != digest(record):
            raise RecordFormatError("the record does not match its digest (damaged or edited)")
        return schema.check(record)
    except RecordFormatError as exc:
        raise RecordFormatError(f"line {number}: {exc}") from None


def _load(line: str) -> Any:
    try:
        value = json.loads(line, parse_constant=_no_constant)
    except RecursionError:
        raise RecordFormatError(f"nested deeper than {MAX_DEPTH}") from None
    except ValueError as exc:  # JSONDecodeError, and integers too long to convert
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "a number too long"
        raise RecordFormatError(f"not JSON ({detail})") from None
    _check_tree(value)
    return value


def _no_constant(name: str) -> Any:
    raise RecordFormatError(f"not JSON ({name} is not a number)")


def _check_tree(value: Any) -> None:
    """RecordFormatError when ``value`` nests deeper than MAX_DEPTH, holds a lone surrogate or a number
    too large for a float (``1e999``)."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_text(node)
        elif isinstance(node, float) and not math.isfinite(node):
            raise RecordFormatError("not JSON (a number out of range)")
        elif isinstance(node, list | dict):
            if depth >= MAX_DEPTH:
                raise RecordFormatError(f"nested deeper than {MAX_DEPTH}")
            if isinstance(node, dict):
                for key in node:
                    _check_text(key)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordFormatError("a string holds a lone surrogate (not Unicode text)") from None
