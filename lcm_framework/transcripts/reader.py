"""The strict JSONL reader: one validated JSON object or array per physical line.

Contract ("What raw transcript means"): each record is valid UTF-8, at most
``MAX_RECORD_BYTES``, a JSON object or array nested at most ``MAX_JSON_DEPTH``
deep, with no U+0000, no lone surrogate, no duplicate member name (also after
escape decoding), no NaN/Infinity, no integer-valued number outside
+/-(2^53-1) in any spelling, and no number whose canonical decimal value would
change when read as a double. A line that breaks the contract becomes a
``RejectedRecord`` carrying one of the spec's reason codes; reading always goes
on with the next line. Memory stays bounded by one record: an oversized line is
hashed in chunks and never held.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any, BinaryIO

import orjson
import re2

from ..errors import TranscriptError

MAX_RECORD_BYTES = 10 * 1024 * 1024
MAX_JSON_DEPTH = 100
MAX_LINK_SOURCE_ORDINAL = 2_147_483_647
MAX_SAFE_INTEGER = 2**53 - 1

_CHUNK = 1024 * 1024
_WHITESPACE = b" \t\r\n"
_BINARY_CONTROLS = re.compile(rb"[\x00-\x08\x0e-\x1f]")
_ESCAPE_HAZARD = re.compile(r"[\ud800-\udfff]")
_ESCAPE_PREFILTER = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
# A float token of compact JSON: after ":", "," or "[", before ",", "]" or "}" (it may also match inside a string).
_FLOAT_TOKEN = re2.compile(rb"[:,\[]-?[0-9]+(?:\.[0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)[,\]}]")


class Reason(str, Enum):
    """The bounded reason codes of the local quarantine."""

    INVALID_UTF8 = "invalid-utf8"
    BINARY_INPUT = "binary-input"
    RECORD_TOO_LARGE = "record-too-large"
    MALFORMED_JSON = "malformed-json"
    NON_CONTAINER_JSON = "non-container-json"
    NUL_CHARACTER = "nul-character"
    REDACTED_KEY_COLLISION = "redacted-key-collision"
    RESIDUAL_SECRET = "residual-secret"
    NESTING_TOO_DEEP = "nesting-too-deep"


class RecordRejected(TranscriptError):
    """A record broke the reader's contract. The message never contains record content."""

    def __init__(self, reason: Reason, detail: str = "") -> None:
        self.reason = reason
        super().__init__(f"record rejected: {reason.value}" + (f" ({detail})" if detail else ""))


@dataclass(frozen=True, slots=True)
class ParsedRecord:
    """An accepted line; ``raw`` holds its bytes without the newline. ``float_free``: the line holds no float
    token, so its value holds no float (its canonical JSON needs no check of how floats are written)."""

    ordinal: int
    start: int
    end: int
    value: dict[str, Any] | list[Any]
    raw: bytes
    float_free: bool = False

    @property
    def raw_sha256(self) -> str:
        """The digest of ``raw``, computed on demand: only a record refused later (by the scrubber) needs it."""
        return hashlib.sha256(self.raw).hexdigest()


@dataclass(frozen=True, slots=True)
class RejectedRecord:
    """A refused line: only metadata, never its content."""

    ordinal: int
    start: int
    end: int
    reason: Reason
    raw_sha256: str


def _reject(reason: Reason, detail: str = "") -> RecordRejected:
    return RecordRejected(reason, detail)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _reject(Reason.MALFORMED_JSON, "duplicate member name")
    return obj


def _parse_int(text: str) -> int:
    # more than 16 digits is always beyond 2^53-1; never hand a huge literal to int()
    if len(text.lstrip("-")) > 16 or abs(value := int(text)) > MAX_SAFE_INTEGER:
        raise _reject(Reason.MALFORMED_JSON, "integer outside the safe range")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise _reject(Reason.MALFORMED_JSON, "numeric overflow")
    if value.is_integer() and abs(value) > MAX_SAFE_INTEGER:
        raise _reject(Reason.MALFORMED_JSON, "integer outside the safe range")
    try:
        exact = Decimal(text)
    except InvalidOperation:  # pragma: no cover - the JSON scanner only hands over valid numbers
        raise _reject(Reason.MALFORMED_JSON, "bad number") from None
    if exact != Decimal(repr(value)):
        raise _reject(Reason.MALFORMED_JSON, "lossy number")
    return value


def _parse_constant(name: str) -> Any:
    raise _reject(Reason.MALFORMED_JSON, f"{name} is not JSON")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_float=_parse_float, parse_int=_parse_int, parse_constant=_parse_constant
)


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True when containers nest deeper than ``limit`` (the top-level container is depth 1)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def _hazard_reason(value: Any) -> Reason | None:
    """U+0000 or a lone surrogate in a decoded key or string (only escapes can produce them)."""
    stack = [value]
    found: Reason | None = None
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            if "\x00" in node:
                return Reason.NUL_CHARACTER
            if _ESCAPE_HAZARD.search(node):
                found = Reason.MALFORMED_JSON
    return found


def _undecodable_reason(data: bytes) -> Reason:
    controls = len(_BINARY_CONTROLS.findall(data[:4096]))
    if b"\x00" in data or controls * 10 > min(len(data), 4096):
        return Reason.BINARY_INPUT
    return Reason.INVALID_UTF8


def _canonical_value(data: bytes) -> dict[str, Any] | list[Any] | None:
    """The container ``data`` spells exactly as orjson writes it back (compact, no float, no escaped U+0000),
    else None.

    Such a line passes every check of the contract: orjson refuses invalid UTF-8, raw controls, NaN and
    lone surrogates; writing back keeps no duplicate member and (``OPT_STRICT_INTEGER``) no integer
    beyond +/-(2^53-1); without a float, no number can be lossy. Its value is the one ``json`` reads.
    What it leaves (floats, whitespace, escapes orjson would not write) goes through the full check.
    """
    if _FLOAT_TOKEN.search(data) or b"\\u0000" in data:  # searched first: a line with floats is decoded once
        return None
    try:
        value = orjson.loads(data)
        if orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER) != data:
            return None
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return None
    return value if isinstance(value, dict | list) else None


def parse_record(data: bytes) -> dict[str, Any] | list[Any]:
    """Parse one record (a line without its newline) or raise ``RecordRejected``."""
    return _parse(data)[0]


def _parse(data: bytes) -> tuple[dict[str, Any] | list[Any], bool]:
    """``parse_record``'s value, and whether it is known to hold no float (the line took the orjson path)."""
    if len(data) > MAX_RECORD_BYTES:
        raise _reject(Reason.RECORD_TOO_LARGE)
    value = _canonical_value(data)
    float_free = value is not None
    text = None
    if value is None:
        text = _text(data)
        value = _strict_value(text)
    if (data.count(b"[") + data.count(b"{")) > MAX_JSON_DEPTH and _depth_exceeds(value, MAX_JSON_DEPTH):
        raise _reject(Reason.NESTING_TOO_DEEP)
    if text is not None and _ESCAPE_PREFILTER.search(text):
        reason = _hazard_reason(value)
        if reason is not None:
            raise _reject(reason, "escaped U+0000" if reason is Reason.NUL_CHARACTER else "lone surrogate")
    return value, float_free


def _text(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _reject(_undecodable_reason(data)) from None
    if "\x00" in text:
        raise _reject(Reason.NUL_CHARACTER)
    return text


def _strict_value(text: str) -> dict[str, Any] | list[Any]:
    """The container ``text`` holds, read by the standard library with every number and member checked."""
    try:
        value = _DECODER.decode(text)
    except RecordRejected:
        raise
    except RecursionError:
        raise _reject(Reason.NESTING_TOO_DEEP) from None
    except ValueError:  # JSONDecodeError, or int() refusing a literal
        raise _reject(Reason.MALFORMED_JSON) from None
    if not isinstance(value, dict | list):
        raise _reject(Reason.NON_CONTAINER_JSON)
    return value


def read_records(
    fp: BinaryIO, *, start_offset: int = 0, first_ordinal: int = 0
) -> Iterator[ParsedRecord | RejectedRecord]:
    """Yield every non-blank line of ``fp`` from ``start_offset`` as a parsed or rejected record.

    ``ordinal`` counts physical lines from ``first_ordinal`` (blank lines are
    skipped but counted); ``start``/``end`` are byte offsets of the line
    including its newline. A seekable ``fp`` is positioned at ``start_offset``
    first; otherwise it must already be there.
    """
    if fp.seekable():
        fp.seek(start_offset)
    offset = start_offset
    ordinal = first_ordinal
    limit = MAX_RECORD_BYTES + 1
    while True:
        line = fp.readline(limit)
        if not line:
            return
        start = offset
        if len(line) == limit and not line.endswith(b"\n"):
            digest = hashlib.sha256(line)
            size = len(line)
            while True:
                piece = fp.readline(_CHUNK)
                if not piece:
                    break
                size += len(piece)
                if piece.endswith(b"\n"):
                    digest.update(piece[:-1])
                    break
                digest.update(piece)
            offset += size
            yield RejectedRecord(ordinal, start, offset, Reason.RECORD_TOO_LARGE, digest.hexdigest())
            ordinal += 1
            continue
        offset += len(line)
        body = line[:-1] if line.endswith(b"\n") else line
        if not body.strip(_WHITESPACE):
            ordinal += 1
            continue
        try:
            value, float_free = _parse(body)
        except RecordRejected as exc:
            yield RejectedRecord(ordinal, start, offset, exc.reason, hashlib.sha256(body).hexdigest())
        else:
            yield ParsedRecord(ordinal, start, offset, value, body, float_free)
        ordinal += 1
