"""What a transcript format plugin provides."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..storage.inputs import FormatIdentity, NewMessage, PartKind


@dataclass(frozen=True, slots=True)
class SubagentRef:
    """The sub-agent run a record of a session's own file belongs to (records of a run kept inline).

    ``agent_id`` is the run's id when the record states it. Without one, a run is the chain of
    records that starts at a record without ``parent_record_id``: the importer follows
    ``record_id`` / ``parent_record_id`` back to that first record.
    """

    agent_id: str | None = None
    record_id: str | None = None
    parent_record_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpawnedBy:
    """A whole transcript file is one sub-agent run: the session that started it and the run's id."""

    parent_session_id: str
    agent_id: str
    agent_type: str | None = None
    own_session: bool = False
    """True: the file states its own session id; False: it states its parent's, so the run is stored as
    the session ``<parent session>/agent-<agent id>``."""
    tool_call_id: str | None = None
    """The call that started the run, when the file or a sidecar file next to it says so."""


@dataclass(frozen=True, slots=True)
class Spawn:
    """A tool call part that started a sub-agent run, or its result naming the run.

    ``agent_id`` (from the result) or ``prompt_sha256`` (SHA-256 of the prompt the call gave the run, the
    run's first user message) is what a run is matched by.
    """

    tool_call_id: str
    agent_id: str | None = None
    prompt_sha256: str | None = None
    agent_type: str | None = None


@dataclass(frozen=True, slots=True)
class MappedRecord:
    """What one native record means to LCM.

    ``message`` is ``None`` for records kept only as native records (metadata,
    events, summaries). ``kind`` names a record that looks like a
    message but is not conversation, so it is kept native only on purpose (never
    summarized, assembled or restored; ``lcm grep --include-meta`` finds it): one of
    ``RECORD_KINDS``. ``session_id``/``cwd`` are the record's own view of its
    session and working directory when it states them. ``subagent`` names the
    sub-agent run a record belongs to (``None``: the session's own thread);
    ``spawned_by`` is stated by a record that makes its whole file a sub-agent run.
    """

    session_id: str | None = None
    cwd: str | None = None
    timestamp: datetime | None = None
    message: NewMessage | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    subagent: SubagentRef | None = None
    spawned_by: SpawnedBy | None = None
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
CLIENT_AUTHORED = '{"authored_by":"client"}'
"""Part metadata of text the agent client wrote into a user turn, such as an expanded slash command: the model
read it (so it is conversation) but the user did not type it (so memory promotion takes nothing from it)."""


def client_authored(metadata: str | None) -> bool:
    """Whether a part's ``metadata`` marks it ``CLIENT_AUTHORED``."""
    if not metadata or "authored_by" not in metadata:
        return False
    try:
        data = json.loads(metadata)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("authored_by") == "client"


class PartView(Protocol):
    """What ``SubagentFormat.spawn`` reads of a part (a ``NewPart`` or a stored ``MessagePart``)."""

    @property
    def kind(self) -> PartKind: ...
    @property
    def text(self) -> str | None: ...
    @property
    def tool_call_id(self) -> str | None: ...
    @property
    def tool_name(self) -> str | None: ...


class TranscriptFormat(Protocol):
    """A versioned client-native JSONL transcript format."""

    identity: FormatIdentity
    provider: str
    """Short provider name used by ``lcm import --provider`` (the agent's short name)."""

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


@runtime_checkable
class SubagentFormat(Protocol):
    """Optional: a format whose sessions start sub-agent runs kept in files of their own."""

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        """The run a file holds when its location says so (e.g. ``subagents/agent-<id>.jsonl``), else None.

        ``parent_session_id`` may be empty: the records' own session id is the parent then."""
        ...

    def companions(self, path: Path) -> list[Path]:
        """The sub-agent files that belong to the session file ``path`` (the hooks import them too)."""
        ...

    def spawn(self, part: PartView) -> Spawn | None:
        """The sub-agent run a tool call or tool result part starts or names, else None."""
        ...
