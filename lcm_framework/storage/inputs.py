"""What a transcript format produces: message and part inputs, roles, and format identity.

Kept apart from ``models`` so format plugins import only these few records
(``models`` re-exports them; both names refer to the same classes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum


class Role(str, Enum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class PartKind(str, Enum):
    """Shape of one structured content block of a message."""

    TEXT = "text"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    REASONING = "reasoning"
    IMAGE = "image"
    FILE = "file"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class NewPart:
    """A content block to store with a message. ``raw_json`` keeps the original block verbatim."""

    kind: PartKind
    text: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    raw_json: str | None = None
    metadata: str | None = None


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to store. ``seq`` is ``None`` for atomic append, explicit for replay/import."""

    role: Role
    content: str
    token_count: int
    created_at: datetime | None = None
    seq: int | None = None
    parts: Sequence[NewPart] = ()


@dataclass(frozen=True, slots=True)
class FormatIdentity:
    client_name: str
    format_name: str
    format_version: str

    @property
    def identifier(self) -> str:
        return f"{self.client_name}/{self.format_name}/{self.format_version}"
