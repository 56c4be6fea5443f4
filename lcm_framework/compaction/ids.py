"""Identifiers LCM derives itself: summaries (``sum_``), large files (``file_``), messages (``msg_``)."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

SUMMARY_PREFIX = "sum_"
FILE_PREFIX = "file_"
MESSAGE_PREFIX = "msg_"
SUMMARY_ID = re.compile(rf"{SUMMARY_PREFIX}[0-9a-f]{{16}}")
FILE_ID = re.compile(rf"{FILE_PREFIX}[0-9a-f]{{16}}")
"""The exact shapes ``summary_id`` and ``file_id`` make: check an id from outside with ``fullmatch``."""


def summary_id(content: str, created_at: datetime) -> str:
    """``sum_`` + 16 hex chars of SHA-256(content + timestamp), as the spec defines."""
    digest = hashlib.sha256((content + created_at.isoformat()).encode("utf-8")).hexdigest()
    return SUMMARY_PREFIX + digest[:16]


def file_id(content: str) -> str:
    """``file_`` + 16 hex chars of SHA-256(content): the same block is stored once."""
    return FILE_PREFIX + hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


def message_ref(message_id: int) -> str:
    """The public spelling of a message id (``msg_42``)."""
    return f"{MESSAGE_PREFIX}{message_id}"
