"""The portable record format: one JSON object a line, a header first.

Header: ``{"format": "lcm-records", "version": 1, ...}``. Every later line is a record with a ``type``
(``project``, ``conversation``, ``memory``) and a ``digest``: the sha256 of the record's canonical JSON
(sorted keys, no whitespace) without the ``digest`` key. Records carry no backend-assigned ids: messages
are named by ``[session_id, segment, seq]``, summaries and files by their content-derived ids.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from ..errors import LcmError

FORMAT = "lcm-records"
VERSION = 1


class RecordFormatError(LcmError):
    """A stream that is not portable records, or of a newer version than this LCM reads."""

    exit_code = 2
    code = "record_format"


def canonical(record: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in record.items() if k != "digest"}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))


def with_digest(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "digest": hashlib.sha256(canonical(record).encode("utf-8")).hexdigest()}


def header(*, backend: str, created_at: datetime) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "backend": backend, "created_at": created_at.isoformat()}


def check_header(line: str) -> dict[str, Any]:
    try:
        head = json.loads(line)
    except json.JSONDecodeError:
        head = None
    if not isinstance(head, dict) or head.get("format") != FORMAT or not isinstance(head.get("version"), int):
        raise RecordFormatError(f"not an LCM records file (the first line must be a {FORMAT!r} header)")
    if head["version"] > VERSION:
        raise RecordFormatError(
            f"this file is format version {head['version']}, newer than the version {VERSION} this LCM reads: "
            "upgrade LCM to import it")
    return head


def parse_record(line: str, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordFormatError(f"line {number} is not JSON ({exc.msg})") from None
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise RecordFormatError(f"line {number} is not a record (an object with a type)")
    if record.get("digest") != with_digest(record)["digest"]:
        raise RecordFormatError(f"line {number}: the record does not match its digest (damaged or edited)")
    return record


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def when(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def required_when(value: Any) -> datetime:
    found = when(value)
    if found is None:
        raise RecordFormatError("a record lacks a required timestamp")
    return found
