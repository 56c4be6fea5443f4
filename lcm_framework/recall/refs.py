"""The public id syntax of recall: ``sum_<16 hex>``, ``msg_<integer>``, ``file_<16 hex>``.

Message ids are numbered per project; summary and file ids are content hashes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

from ..compaction.ids import FILE_PREFIX, MESSAGE_PREFIX, SUMMARY_PREFIX, message_ref
from ..errors import LcmError

_MESSAGE = re.compile(rf"{MESSAGE_PREFIX}(\d{{1,16}})")
_MEMORY = re.compile(r"mem_(\d{1,16})")
_HASHED = re.compile(rf"({SUMMARY_PREFIX}|{FILE_PREFIX})[0-9a-f]{{1,64}}")


class RefKind(str, Enum):
    SUMMARY = "summary"
    MESSAGE = "message"
    FILE = "file"
    MEMORY = "memory"


class InvalidReferenceError(LcmError):
    """An id that is not ``sum_...``, ``msg_N`` or ``file_...``."""

    exit_code = 2


class InvalidArgumentError(LcmError):
    """A recall argument (such as a date) that cannot be understood."""

    exit_code = 2


class RecallNotFoundError(LcmError):
    """The id or session does not exist in the searched project(s)."""

    code = "not_found"


class SessionNotFoundError(RecallNotFoundError):
    """No session has this id or prefix in the searched project(s)."""

    code = "session_not_found"


@dataclass(frozen=True, slots=True)
class Ref:
    kind: RefKind
    text: str

    @property
    def message_id(self) -> int:
        return int(self.text[len(MESSAGE_PREFIX) :])

    @property
    def memory_id(self) -> int:
        return int(self.text.removeprefix("mem_"))


def parse_since(text: str | None) -> datetime | None:
    """An ISO date or date-time (``Z`` allowed); naive values are UTC."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidArgumentError(
            f"since expects an ISO date or date-time such as 2026-02-17 or 2026-02-17T08:00, got {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_ref(text: str) -> Ref:
    """A ``msg_N``, ``sum_<hex>``, ``file_<hex>`` or ``mem_N`` reference; InvalidReferenceError otherwise."""
    value = text.strip()
    if _MESSAGE.fullmatch(value):
        return Ref(RefKind.MESSAGE, value)
    if _MEMORY.fullmatch(value):
        return Ref(RefKind.MEMORY, value)
    hashed = _HASHED.fullmatch(value)
    if hashed:
        return Ref(RefKind.SUMMARY if hashed.group(1) == SUMMARY_PREFIX else RefKind.FILE, value)
    raise InvalidReferenceError(
        f"{text!r} is not an id LCM knows: use sum_<hex> (summary), msg_<number> (message), "
        "file_<hex> (large file) or mem_<number> (memory), as printed by `lcm grep`, `lcm search` "
        "and `lcm memory list`"
    )


__all__ = [
    "InvalidArgumentError",
    "InvalidReferenceError",
    "RecallNotFoundError",
    "Ref",
    "RefKind",
    "SessionNotFoundError",
    "message_ref",
    "parse_ref",
    "parse_since",
]
