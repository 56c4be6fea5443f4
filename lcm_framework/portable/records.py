"""The portable record format: one JSON object a line, a header first.

Header: ``{"format": "lcm-records", "version": 1, ...}``. Every later line is a record with a ``type``
(``project``, ``conversation``, ``memory``) and a ``digest``: the sha256 of the record's canonical JSON
(sorted keys, no whitespace) without the ``digest`` key. Records carry no backend-assigned ids: messages
are named by ``[session_id, segment, seq]``, summaries and files by their content-derived ids.

The digest is an integrity check against damage (a truncated copy, a bad disk, an edit by mistake), not
authentication: it is unkeyed, so whoever edits a file can recompute it. What makes a hostile file
harmless is the reader (``reader``: exact types and id formats) and the importer (every text re-scrubbed).
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


def digest(record: dict[str, Any]) -> str:
    """The sha256 of ``record``'s canonical JSON without its ``digest`` key."""
    return hashlib.sha256(canonical(record).encode("utf-8")).hexdigest()


def with_digest(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "digest": digest(record)}


def header(*, backend: str, created_at: datetime) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "backend": backend, "created_at": created_at.isoformat()}


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def when(value: str | None) -> datetime | None:
    """A timestamp the reader checked (``None`` stays ``None``)."""
    return datetime.fromisoformat(value) if value is not None else None


def required_when(value: str) -> datetime:
    """A timestamp the reader checked is present."""
    return datetime.fromisoformat(value)
