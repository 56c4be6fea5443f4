"""What a transcript format plugin provides."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from ..storage.inputs import FormatIdentity, NewMessage


@dataclass(frozen=True, slots=True)
class MappedRecord:
    """What one native record means to LCM.

    ``message`` is ``None`` for records kept only as native records (metadata,
    events, sidechains, summaries). ``session_id``/``cwd`` are the record's own
    view of its session and working directory when it states them.
    """

    session_id: str | None = None
    cwd: str | None = None
    timestamp: datetime | None = None
    message: NewMessage | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)


class TranscriptFormat(Protocol):
    """A versioned client-native JSONL transcript format."""

    identity: FormatIdentity
    provider: str
    """Short provider name used by ``lcm import --provider`` (e.g. ``claude``)."""

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """Client roots to scan when no path is given (respecting the client's env vars)."""
        ...

    def discover(self, root: Path) -> Iterator[Path]:
        """Transcript files under ``root``, in a stable order."""
        ...

    def sniff(self, head: Sequence[Any]) -> bool:
        """True when these first parsed records are in this format."""
        ...

    def map_record(self, record: Any) -> MappedRecord:
        """Map one parsed (already scrubbed) record. Must not raise on unknown record types."""
        ...

    def structural_samples(self) -> Sequence[Any]:
        """Representative records whose keys and discriminators scrubbing must never redact."""
        ...
