"""The shape of each portable record: every field's type, every id's exact format, every reference.

``check(record)`` returns the record when it is a well-formed ``project``, ``conversation`` or ``memory``
record and raises ``RecordFormatError`` naming the first offending field otherwise, so nothing downstream
meets a value of the wrong type. Ids LCM derives itself must have the exact shape it makes (``file_`` or
``sum_`` and 16 hex digits, 64 hex digits for digests and ingest keys), and a large file's id must be
the id of its content: an id from a file never names anything else, in particular never a path. A
project root must be an absolute, normalized path. Keys a record carries beyond these are ignored (and
never stored).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..compaction.ids import FILE_ID, SUMMARY_ID, file_id
from ..storage.models import PartKind, Role, SummaryKind
from .records import RecordFormatError

Check = Callable[[Any, str], None]
"""Raises ``RecordFormatError`` when the value at the (dotted) field path is not what the record needs."""

MAX_INT = (1 << 63) - 1
HEX64 = re.compile(r"[0-9a-f]{64}")


def _fail(where: str, expected: str) -> RecordFormatError:
    return RecordFormatError(f"{where}: expected {expected}")


def text(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise _fail(where, "a string")


def flag(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise _fail(where, "true or false")


def count(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        raise _fail(where, f"an integer in 0..{MAX_INT}")


def confidence(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        raise _fail(where, "a number in 0..1")


def timestamp(value: Any, where: str) -> None:
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise _fail(where, "an ISO 8601 timestamp with a time zone")


def shaped(pattern: re.Pattern[str], name: str) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise _fail(where, name)
    return check


def choice(*values: str) -> Check:
    def check(value: Any, where: str) -> None:
        if value not in values:
            raise _fail(where, " or ".join(repr(v) for v in values))
    return check


def optional(inner: Check) -> Check:
    def check(value: Any, where: str) -> None:
        if value is not None:
            inner(value, where)
    return check


def items(inner: Check) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise _fail(where, "a list")
        for n, item in enumerate(value):
            inner(item, f"{where}[{n}]")
    return check


def row(*columns: Check) -> Check:
    """A fixed-length list: ``[session_id, segment, seq]`` and the like."""
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list) or len(value) != len(columns):
            raise _fail(where, f"a list of {len(columns)}")
        for n, (inner, item) in enumerate(zip(columns, value, strict=True)):
            inner(item, f"{where}[{n}]")
    return check


def mapping(value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise _fail(where, "an object")


def obj(**fields: Check) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _fail(where, "an object")
        for key, inner in fields.items():
            if key not in value:
                raise RecordFormatError(f"{where}.{key} is missing")
            inner(value[key], f"{where}.{key}")
    return check


def root(value: Any, where: str) -> None:
    if not isinstance(value, str) or not os.path.isabs(value) or os.path.normpath(value) != value \
            or "\x00" in value:
        raise _fail(where, "an absolute, normalized path")


file_ref = shaped(FILE_ID, "a file id (file_ and 16 hex digits)")
summary_ref = shaped(SUMMARY_ID, "a summary id (sum_ and 16 hex digits)")
hex64 = shaped(HEX64, "64 hex digits")
seq_ref = optional(count)

PART = obj(kind=choice(*(k.value for k in PartKind)), text=optional(text), tool_call_id=optional(text),
           tool_name=optional(text), is_error=flag, raw_json=optional(text), metadata=optional(text))
MESSAGE = obj(seq=count, role=choice(*(r.value for r in Role)), content=text, token_count=count,
              created_at=optional(timestamp), parts=items(PART))
FILE = obj(file_id=file_ref, message_seq=seq_ref, file_name=optional(text), mime_type=optional(text),
           byte_size=count, token_count=count, sha256=hex64, exploration_summary=text, created_at=timestamp,
           content=text)
SUMMARY = obj(summary_id=summary_ref, kind=choice(*(k.value for k in SummaryKind)), depth=count, content=text,
              token_count=count, earliest_at=optional(timestamp), latest_at=optional(timestamp),
              descendant_count=count, file_ids=items(file_ref), source_seqs=items(count),
              parent_ids=items(summary_ref))
NATIVE = obj(ingest_key=hex64, format=row(text, text, text), native_session_id=text, source_locator=text,
             source_ordinal=count, payload_json=text, content_sha256=hex64, scrubber_version=text,
             observed_at=timestamp, message_seq=seq_ref)


def _context_item(value: Any, where: str) -> None:
    if isinstance(value, list) and value[:1] == ["summary"]:
        row(text, summary_ref)(value, where)
    else:
        row(choice("message", "summary"), count)(value, where)


CONVERSATION = obj(session_id=text, segment=count, title=optional(text), messages=items(MESSAGE),
                   files=items(FILE), summaries=items(SUMMARY), context=items(_context_item),
                   native=items(NATIVE))
SUBAGENT = obj(parent_session_id=text, agent_id=optional(text), agent_type=optional(text),
               prompt_sha256=optional(hex64), tool_call_id=optional(text), parent=optional(row(text, count, count)))
"""A sub-agent run's link (a conversation record holds it only when the conversation is one)."""
MEMORY = obj(content=text, tags=items(text), confidence=confidence, archived=flag, created_at=timestamp,
             updated_at=timestamp, source_summary_id=optional(text),
             lineage=obj(origin=text, kind=optional(text), summaries=items(text),
                         messages=items(row(text, count, count)), extra=mapping),
             recall=obj(surfaced=count, useful=count, not_useful=count, last_surfaced_at=optional(timestamp),
                        surfacings=items(row(text, timestamp))))


def check(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` when it is well formed (see the module docstring), else ``RecordFormatError``."""
    kind = record["type"]
    if kind == "project":
        obj(user_wide=flag)(record, "project")
        if not record["user_wide"]:
            obj(root=root)(record, "project")
    elif kind == "conversation":
        CONVERSATION(record, "conversation")
        if "subagent" in record:
            SUBAGENT(record["subagent"], "conversation.subagent")
        _references(record)
    elif kind == "memory":
        MEMORY(record, "memory")
    else:
        raise RecordFormatError(f"unknown record type {kind!r}")
    return record


def _references(record: dict[str, Any]) -> None:
    """Every seq and summary a conversation names is one of its own, each defined once; every large file's
    id is the content id of its content (so it names no other file)."""
    seqs = [m["seq"] for m in record["messages"]]
    if len(set(seqs)) != len(seqs):
        raise RecordFormatError("conversation.messages: a seq occurs twice")
    known, summaries = set(seqs), set[str]()
    for n, s in enumerate(record["summaries"]):
        where = f"conversation.summaries[{n}]"
        if s["summary_id"] in summaries:
            raise RecordFormatError(f"{where}.summary_id occurs twice")
        if not set(s["source_seqs"]) <= known:
            raise RecordFormatError(f"{where}.source_seqs names a message the record lacks")
        if not set(s["parent_ids"]) <= summaries:
            raise RecordFormatError(f"{where}.parent_ids names a summary not listed before it")
        summaries.add(s["summary_id"])
    for n, f in enumerate(record["files"]):
        if f["file_id"] != file_id(f["content"]):
            raise RecordFormatError(f"conversation.files[{n}].file_id is not the id of its content")
        if f["message_seq"] is not None and f["message_seq"] not in known:
            raise RecordFormatError(f"conversation.files[{n}].message_seq names a message the record lacks")
    for n, native in enumerate(record["native"]):
        if native["message_seq"] is not None and native["message_seq"] not in known:
            raise RecordFormatError(f"conversation.native[{n}].message_seq names a message the record lacks")
    for n, (kind, ref) in enumerate(record["context"]):
        if ref not in (known if kind == "message" else summaries):
            raise RecordFormatError(f"conversation.context[{n}] names a {kind} the record lacks")
