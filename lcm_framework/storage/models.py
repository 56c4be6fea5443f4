"""Backend-neutral records that cross the storage boundary.

Plain frozen dataclasses: no SQL, connection, cursor or driver type ever
appears here. Timestamps are timezone-aware UTC ``datetime`` values.
Identifiers are ``int`` for rows the backend numbers (conversations,
messages) and ``str`` for ids LCM derives itself (summaries, files, parts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum

# Re-exported: the records a transcript format produces live in ``inputs`` (a cheap import for format plugins).
from .inputs import FormatIdentity as FormatIdentity
from .inputs import NewMessage as NewMessage
from .inputs import NewPart as NewPart
from .inputs import PartKind as PartKind
from .inputs import Role as Role


@dataclass(frozen=True, slots=True)
class ProjectRef:
    """A project: ``project_id`` is the sha256 of its root path (or a bound remote id)."""

    project_id: str
    root: str


# --- conversations -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Conversation:
    conversation_id: int
    session_id: str
    title: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SubagentLink:
    """A sub-agent run's conversation (``child_conversation_id``) and where it came from.

    ``parent_session_id`` is the session that started it; ``agent_id`` the agent's own id when its
    transcript states one; ``prompt_sha256`` the SHA-256 of its first user message (how a run without
    an id is matched to the call that started it). ``parent_conversation_id``, ``parent_message_id`` and
    ``tool_call_id`` name the tool call that started it once that is known (``None`` until then).
    """

    child_conversation_id: int
    parent_session_id: str
    agent_id: str | None = None
    agent_type: str | None = None
    prompt_sha256: str | None = None
    parent_conversation_id: int | None = None
    parent_message_id: int | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class MessagePart:
    part_id: str
    message_id: int
    ordinal: int
    kind: PartKind
    text: str | None
    tool_call_id: str | None
    tool_name: str | None
    is_error: bool
    raw_json: str | None
    metadata: str | None


@dataclass(frozen=True, slots=True)
class Message:
    message_id: int
    conversation_id: int
    seq: int
    role: Role
    content: str
    token_count: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DeleteResult:
    deleted: tuple[int, ...]
    skipped_summarized: tuple[int, ...]


# --- summaries and context ---------------------------------------------------


class SummaryKind(str, Enum):
    LEAF = "leaf"
    CONDENSED = "condensed"


@dataclass(frozen=True, slots=True)
class NewSummary:
    """A summary to persist with its lineage.

    A leaf names its ``source_message_ids`` (in order); a condensed summary
    names its ``parent_ids`` (the same-depth summaries it condenses, in order).
    """

    summary_id: str
    conversation_id: int
    kind: SummaryKind
    depth: int
    content: str
    token_count: int
    earliest_at: datetime | None
    latest_at: datetime | None
    descendant_count: int
    source_message_ids: Sequence[int] = ()
    parent_ids: Sequence[str] = ()
    file_ids: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class Summary:
    summary_id: str
    conversation_id: int
    kind: SummaryKind
    depth: int
    content: str
    token_count: int
    earliest_at: datetime | None
    latest_at: datetime | None
    descendant_count: int
    file_ids: tuple[str, ...]
    created_at: datetime


class ContextItemKind(str, Enum):
    MESSAGE = "message"
    SUMMARY = "summary"


@dataclass(frozen=True, slots=True)
class ContextItem:
    conversation_id: int
    ordinal: int
    kind: ContextItemKind
    message_id: int | None
    summary_id: str | None
    token_count: int


# --- large files -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LargeFile:
    """Metadata of a large block stored once on disk (content lives in the project's ``files/``)."""

    file_id: str
    conversation_id: int
    message_id: int | None
    file_name: str | None
    mime_type: str | None
    byte_size: int
    token_count: int
    sha256: str
    exploration_summary: str
    created_at: datetime


# --- promoted memory and recall ---------------------------------------------


@dataclass(frozen=True, slots=True)
class NewMemory:
    content: str
    tags: Sequence[str] = ()
    confidence: float = 0.5
    source_summary_id: str | None = None
    metadata: str | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    memory_id: int
    content: str
    tags: tuple[str, ...]
    confidence: float
    source_summary_id: str | None
    metadata: str | None
    archived: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class RecallStats:
    target_id: str
    surfaced: int
    useful: int
    not_useful: int
    last_surfaced_at: datetime | None


@dataclass(frozen=True, slots=True)
class Surfacing:
    """One time a recall target was shown to the model, with the query that surfaced it."""

    target_id: str
    query: str | None
    surfaced_at: datetime


# --- search ------------------------------------------------------------------


class SearchMode(str, Enum):
    FULL_TEXT = "full_text"  # every query phrase must match
    RANKED = "ranked"  # any query phrase may match; more of them, then the whole query as a phrase, rank first
    SUBSTRING = "substring"
    REGEX = "regex"


class SearchTarget(str, Enum):
    MESSAGES = "messages"
    SUMMARIES = "summaries"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A lexical search. ``limit`` ``None`` or negative means unlimited, 0 means no rows."""

    text: str
    mode: SearchMode = SearchMode.FULL_TEXT
    target: SearchTarget = SearchTarget.MESSAGES
    conversation_id: int | None = None
    since: datetime | None = None
    limit: int | None = 50
    include_subagents: bool = True
    """``False``: leave out conversations of sub-agent runs (those with a ``SubagentLink``)."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One hit. ``score``: higher is better; ties ordered by newest, then id, for stable output."""

    target: SearchTarget
    id: str
    conversation_id: int | None
    snippet: str
    score: float
    created_at: datetime


# --- semantic vectors ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VectorSpace:
    """The embedder a project's vectors come from: a change of name or dimensions makes them stale."""

    embedder: str
    dimensions: int


@dataclass(frozen=True, slots=True)
class StoredVector:
    """One message's or summary's vector, quantized: ``dimensions`` signed bytes (``embedding.codec``)."""

    target: SearchTarget
    target_id: str
    vector: bytes


@dataclass(frozen=True, slots=True)
class VectorCount:
    """One target's vectors: how many of its ``stored`` rows have one; ``newest``: the highest message id with
    one (messages only: an import adds messages after it)."""

    embedded: int
    stored: int
    newest: str | None


@dataclass(frozen=True, slots=True)
class VectorQuery:
    """The stored vectors nearest ``vector`` (unit length, the space's dimensions) by cosine similarity."""

    target: SearchTarget
    vector: tuple[float, ...]
    limit: int = 50
    conversation_id: int | None = None
    include_subagents: bool = True


# --- coordination ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Lease:
    """A fenced, expiring mutual-exclusion grant. ``fence`` grows on every new grant."""

    name: str
    holder: str
    fence: int
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class SessionIngestRecord:
    session_id: str
    source: str
    completed_at: datetime
    message_count: int


# --- native transcripts ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NativeRecordInput:
    """One sanitized client-native record with provenance, ready to store."""

    ingest_key: str
    format: FormatIdentity
    native_session_id: str
    source_locator: str
    source_ordinal: int
    payload_json: str
    content_sha256: str
    scrubber_version: str
    observed_at: datetime
    message_id: int | None = None


@dataclass(frozen=True, slots=True)
class NativeRecord:
    transcript_id: int
    ingest_key: str
    format: FormatIdentity
    native_session_id: str
    source_locator: str
    source_ordinal: int
    payload_json: str
    content_sha256: str
    scrubber_version: str
    observed_at: datetime
    ingested_at: datetime
    message_id: int | None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Progress of one source. ``revision`` grows on every successful mutation (ABA-safe CAS)."""

    source_key: str
    revision: int
    byte_offset: int
    prefix_sha256: str
    scrubber_version: str
    last_source_ordinal: int
    imported: int
    skipped: int
    quarantined: int
    state_json: str = "{}"


@dataclass(frozen=True, slots=True)
class NativeBatchResult:
    inserted: int
    skipped: int
    checkpoint: Checkpoint | None


# --- diagnostics -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StorageUsage:
    """Where one project's bytes go. ``objects``: bytes per table and index (on a shared server: the
    whole schema's, every project together, ``shared`` set). ``payload_bytes``: the plain size of the
    values a backend stores compressed (native records, message text and parts, as the backend keeps
    them); ``stored_payload_bytes``: what they take as
    stored, so their difference is what compression saved. ``transcript_bytes``: transcript bytes
    imported (read by checkpoints). ``free_bytes``: space a ``compact_storage`` could give back."""

    objects: Mapping[str, int]
    total_bytes: int
    free_bytes: int
    messages: int
    payload_bytes: int
    stored_payload_bytes: int
    transcript_bytes: int
    shared: bool = False


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """What ``compact_storage`` did: rows rewritten with the newest codec and bytes given back."""

    recompressed: int
    bytes_before: int
    bytes_after: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Health:
    backend: str
    ok: bool
    state: str
    project: str | None = None
    domain: str | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class ProjectStats:
    conversations: int
    messages: int
    summaries_by_depth: Mapping[int, int] = field(default_factory=dict)
    message_tokens: int = 0
    context_tokens: int = 0
    large_files: int = 0
    redactions: Mapping[str, int] = field(default_factory=dict)
    storage_bytes: int | None = None
    subagent_conversations: int = 0
    """How many of ``conversations`` are sub-agent runs."""
