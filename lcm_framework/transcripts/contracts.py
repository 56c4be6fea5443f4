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
    events, sidechains, summaries). ``kind`` names a record that looks like a
    message but is not conversation, so it is kept native only on purpose (never
    summarized, assembled or restored; ``lcm grep --include-meta`` finds it): one of
    ``RECORD_KINDS``. ``session_id``/``cwd`` are the record's own view of its
    session and working directory when it states them.
    """

    session_id: str | None = None
    cwd: str | None = None
    timestamp: datetime | None = None
    message: NewMessage | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    kind: str | None = None


AGENT_SCAFFOLDING = "agent_scaffolding"
"""What the agent injects around the conversation: instructions, skill lists, environment context."""
CLIENT_META = "client_meta"
"""The client's own bookkeeping: compaction boundaries, local-command echoes, caveats, hook output."""
COMPACT_SUMMARY = "compact_summary"
"""The agent's own summary of the turns it compacted (LCM keeps those turns themselves)."""
LCM_CONTEXT = "lcm_context"
"""LCM's own restored context, as the agent wrote it back into its transcript."""
RECORD_KINDS = (AGENT_SCAFFOLDING, CLIENT_META, COMPACT_SUMMARY, LCM_CONTEXT)


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
