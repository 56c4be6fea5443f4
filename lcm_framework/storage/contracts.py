"""The storage contracts every backend implements.

``StorageBackendFactory.open_project()`` returns a ``ProjectStorage`` whose
repositories are bound to one project. The API is synchronous: see
``docs/architecture.md`` ("Sync storage, concurrent callers") for why.

Rules every implementation honours (the conformance suite checks them):

* Inputs are validated before any database access: each method with arguments
  names its rule next to its signature (``@checks(rule)``, ``storage.call_rules``),
  and the core's wrapper (``storage.checked``) runs it before the adapter sees
  the call. U+0000 in any text is refused, counts/sequences/ordinals are
  integers in ``[0, 2**53-1]``.
* Pagination: ``after_seq`` is exclusive; ``limit`` ``None`` or negative means
  unlimited, ``0`` means no rows.
* Errors are ``lcm_framework.errors.StorageError`` subclasses naming backend,
  project and domain only.
* Nothing here exposes SQL, connections or driver types; there is no generic
  query escape hatch. A missing operation is added to the contract, to every
  adapter, and to ``tests/conformance``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Protocol, TypeVar, runtime_checkable

from . import call_rules as rules
from . import validation
from .call_rules import checks
from .inbox import InboxBacklog, InboxClaim, InboxEvent, InboxRow, PassiveEffect, PruneOutcome
from .models import (
    Checkpoint,
    ContextItem,
    Conversation,
    DeleteResult,
    Health,
    LargeFile,
    Lease,
    MaintenanceReport,
    Memory,
    Message,
    MessagePart,
    NativeBatchResult,
    NativeRecord,
    NativeRecordInput,
    NewMemory,
    NewMessage,
    NewSummary,
    ProjectRef,
    ProjectStats,
    RecallStats,
    SearchHit,
    SearchQuery,
    SearchTarget,
    SessionIngestRecord,
    StorageUsage,
    StoredVector,
    SubagentLink,
    Summary,
    Surfacing,
    VectorCount,
    VectorQuery,
    VectorSpace,
)

T = TypeVar("T")


class FullTextTier(str, Enum):
    FTS5 = "fts5"
    FTS4 = "fts4"
    LIKE = "like"
    POSTGRES = "postgres"


class CoordinationScope(str, Enum):
    LOCAL = "local"
    DISTRIBUTED = "distributed"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do. Callers check these before optional operations."""

    backend: str
    transactions: bool
    lexical_search: bool
    regex_search: bool
    full_text_search: bool
    full_text_tier: FullTextTier
    coordination: CoordinationScope
    passive_inbox: bool = False
    """Whether ``Repositories.passive_inbox`` works (a shared backend several machines deliver to)."""


class ConversationRepository(Protocol):
    """Conversation identity, messages, message parts, ordering and deletion."""

    @checks(rules.new_session)
    def create_conversation(self, session_id: str, *, title: str | None = None) -> Conversation: ...
    @checks(rules.new_session)
    def get_or_create_conversation(self, session_id: str, *, title: str | None = None) -> Conversation:
        """Newest exact session match, or a new one; concurrent callers converge."""
        ...
    @checks(rules.conversation)
    def get_conversation(self, conversation_id: int) -> Conversation | None: ...
    @checks(rules.conversations_of)
    def find_conversations(self, session_id: str) -> list[Conversation]:
        """All segments of a session, oldest first (created_at, then id)."""
        ...
    @checks(rules.limit)
    def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        """Ordered by created_at, then conversation_id."""
        ...
    @checks(validation.validate_append)
    def append_messages(self, conversation_id: int, messages: Sequence[NewMessage]) -> list[Message]:
        """Atomic append: allocates contiguous seqs after the current last one (from 0).

        Every message must have ``seq=None`` (an explicit seq is a DataValidationError);
        a missing conversation is a NotFoundError.
        """
        ...
    @checks(validation.validate_insert)
    def insert_messages(self, conversation_id: int, messages: Sequence[NewMessage]) -> list[Message]:
        """Replay/import with explicit ``seq`` on every message; duplicate seq is a ConflictError."""
        ...
    @checks(rules.message_page)
    def list_messages(
        self, conversation_id: int, *, after_seq: int | None = None, limit: int | None = None
    ) -> list[Message]: ...
    @checks(rules.message_ids)
    def get_messages(self, message_ids: Sequence[int]) -> list[Message]:
        """Messages by id, in the order asked, missing ids omitted."""
        ...
    @checks(rules.content_match)
    def find_message_by_content(self, conversation_id: int, role: str, content: str) -> list[Message]:
        """Exact role+content matches, by seq (used to find the reconciliation anchor)."""
        ...
    @checks(rules.message_ids)
    def list_parts(self, message_ids: Sequence[int]) -> dict[int, list[MessagePart]]:
        """Parts grouped by message id, each list by ordinal; messages without parts have no key."""
        ...
    @checks(rules.conversation)
    def message_count(self, conversation_id: int) -> int: ...
    @checks(rules.message_ids)
    def delete_messages(self, message_ids: Sequence[int]) -> DeleteResult:
        """Deletes unsummarized messages (parts cascade, context refs removed); skips summarized ones.

        Remaining context ordinals are renumbered 0..n-1; unknown ids are in neither result list.
        """
        ...
    @checks(validation.validate_subagent_link)
    def link_subagent(self, link: SubagentLink) -> SubagentLink:
        """Record (or complete) the link of a sub-agent run's conversation; returns the stored link.

        A new link is stored as given. An existing one keeps every field it has and gains the fields it
        lacks (``None``) from ``link``, so repeated and concurrent calls converge. A missing child or
        parent conversation or parent message is a NotFoundError.
        """
        ...
    @checks(rules.child)
    def get_subagent_link(self, child_conversation_id: int) -> SubagentLink | None: ...
    @checks(rules.parent_session)
    def list_subagent_links(self, *, parent_session_id: str | None = None) -> list[SubagentLink]:
        """Links of the project (or those started by one session), by child conversation id.

        Inside a transaction, ``link_subagent`` and this call with a ``parent_session_id`` wait for other
        transactions that did the same for that session, so a run and its parent stored at once by two
        processes find each other (the later transaction sees the earlier one's rows)."""
        ...


class SummaryRepository(Protocol):
    """Summary records and DAG lineage."""

    @checks(validation.validate_new_summary)
    def create_summary(self, summary: NewSummary) -> Summary:
        """A leaf has depth 0 and no parents, a condensed summary depth >= 1 and no source messages
        (else DataValidationError); a duplicate id is a ConflictError, a missing reference a NotFoundError."""
        ...
    @checks(rules.summary_id)
    def get_summary(self, summary_id: str) -> Summary | None: ...
    @checks(rules.summary_ids)
    def get_summaries(self, summary_ids: Sequence[str]) -> list[Summary]: ...
    @checks(rules.summary_page)
    def list_summaries(self, conversation_id: int, *, depth: int | None = None) -> list[Summary]:
        """Ordered by created_at, then summary_id."""
        ...
    @checks(rules.summary_id)
    def source_message_ids(self, summary_id: str) -> list[int]:
        """A leaf's source messages, in order."""
        ...
    @checks(rules.summary_id)
    def parent_ids(self, summary_id: str) -> list[str]:
        """A condensed summary's source summaries (its ``parents``), in order."""
        ...
    @checks(rules.summary_id)
    def child_ids(self, summary_id: str) -> list[str]:
        """Summaries that condensed this one."""
        ...
    @checks(rules.message_ids)
    def summaries_for_messages(self, message_ids: Sequence[int]) -> dict[int, list[str]]:
        """Leaf summary ids covering each message (oldest first); uncovered messages have no key."""
        ...
    @checks(rules.optional_conversation)
    def count_by_depth(self, conversation_id: int | None = None) -> dict[int, int]: ...


class ContextRepository(Protocol):
    """The ordered list of what the model sees per conversation."""

    @checks(rules.conversation)
    def list_items(self, conversation_id: int) -> list[ContextItem]: ...
    @checks(rules.messages_of)
    def append_messages(self, conversation_id: int, message_ids: Sequence[int]) -> None: ...
    @checks(validation.validate_range)
    def replace_range(
        self, conversation_id: int, start_ordinal: int, end_ordinal: int, summary_id: str
    ) -> None:
        """Replace items ``start..end`` (inclusive) with one summary item; later ordinals shift down.

        ``end < start`` is a DataValidationError; a range not fully present, or a summary of another
        conversation, is a NotFoundError.
        """
        ...
    @checks(rules.conversation)
    def token_total(self, conversation_id: int) -> int: ...
    @checks(rules.conversation)
    def depths(self, conversation_id: int) -> list[int]:
        """Distinct summary depths currently in context, ascending."""
        ...


class LargeFileRepository(Protocol):
    @checks(validation.validate_large_file)
    def create_file(self, file: LargeFile) -> LargeFile: ...
    @checks(rules.file_id)
    def get_file(self, file_id: str) -> LargeFile | None: ...
    @checks(rules.conversation)
    def list_files(self, conversation_id: int) -> list[LargeFile]: ...


class PromotedMemoryRepository(Protocol):
    @checks(rules.new_memory)
    def create_memory(self, memory: NewMemory) -> Memory: ...
    @checks(rules.restored_memory)
    def restore_memory(self, memory: Memory) -> Memory:
        """Store a memory exported elsewhere with its archived flag and timestamps; a new ``memory_id``
        is assigned (``memory.memory_id`` is ignored)."""
        ...
    @checks(rules.memory_id)
    def get_memory(self, memory_id: int) -> Memory | None: ...
    @checks(rules.memory_filter)
    def list_memories(self, *, include_archived: bool = False, tag: str | None = None) -> list[Memory]: ...
    @checks(rules.confidence_update)
    def set_confidence(self, memory_id: int, confidence: float, *, metadata: str | None = None) -> Memory:
        """Set the confidence; ``metadata``, when given, replaces the memory's metadata in the same write."""
        ...
    @checks(rules.memory_id)
    def archive(self, memory_id: int) -> Memory: ...
    @checks(rules.memory_id)
    def revive(self, memory_id: int) -> Memory: ...
    @checks(rules.stale)
    def stale_candidates(self, *, older_than: datetime, max_confidence: float) -> list[Memory]: ...
    @checks(rules.memory_id)
    def delete_memory(self, memory_id: int) -> None:
        """Deletes one memory (its recall history is the recall repository's); NotFoundError when missing."""
        ...


class RecallRepository(Protocol):
    @checks(rules.surfacing)
    def record_surfacing(self, target_ids: Sequence[str], *, query: str | None = None) -> None: ...
    @checks(rules.feedback)
    def record_feedback(self, target_id: str, *, useful: bool) -> None: ...
    @checks(rules.target)
    def stats(self, target_id: str) -> RecallStats: ...
    @checks(rules.target)
    def surfacings(self, target_id: str) -> list[Surfacing]:
        """Every recorded surfacing of ``target_id``, oldest first."""
        ...
    @checks(validation.validate_history)
    def restore_history(self, stats: RecallStats, surfacings: Sequence[Surfacing]) -> None:
        """Replace the whole history of ``stats.target_id`` with these counters and surfacings (import)."""
        ...
    @checks(rules.target_ids)
    def forget(self, target_ids: Sequence[str]) -> None:
        """Deletes the counters and surfacings of these targets."""
        ...


RANK_CANDIDATES = 10_000
"""The ranking bound a backend may apply: an unfiltered FULL_TEXT query (no ``conversation_id``, no ``since``)
ranks at most the newest this many matching rows, because ranking must score every candidate before the top
hits are known. Filtered queries rank all their matches. SQLite's FTS tiers apply it; PostgreSQL does not
(measured: there finding the matches, not ranking them, dominates, and the bounded plan was slower)."""

COMMON_SHARE = 20
COMMON_MIN = 1_000
"""RANKED: a phrase matching more than COMMON_MIN rows and more than one in COMMON_SHARE of the rows searched
is a stop word of this corpus: it scores its point on the rows it matches but selects no candidates and adds
no relevance weight (bm25, cover density). Every backend applies the same rule."""


class LexicalSearchRepository(Protocol):
    @checks(rules.search_query)
    def search(self, query: SearchQuery) -> list[SearchHit]:
        """Ranked hits. REGEX needs ``regex_search``; an unsupported mode raises UnsupportedCapabilityError.

        FULL_TEXT: every whitespace-separated word must match (case-insensitive); user text is never
        query syntax. SUBSTRING: case-sensitive exact substring. Archived memory is never returned;
        ``conversation_id`` and ``include_subagents`` do not filter the MEMORY target.
        Ties: newest first, then id ascending.
        RANKED: like FULL_TEXT (stop words dropped, stemmed) but any phrase may match; the score is the number
        of query phrases matched, plus 0.5 when the query's words appear as one phrase, plus a relevance
        fraction below 0.4 (so its integer part counts the phrases matched on every backend).
        A backend may rank only the newest ``RANK_CANDIDATES`` matches of a FULL_TEXT or RANKED query without
        filters.
        """
        ...


class VectorRepository(Protocol):
    """The semantic lane's vectors, one per message and per summary, of one embedder (``VectorSpace``).

    Vectors are ``StoredVector.vector`` bytes (quantized by ``lcm_framework.embedding.codec``); ``nearest``
    scans them (NumPy over binary codes, then exact cosine over the best candidates, or the backend's own
    vector index) and scores each hit by cosine similarity (-1..1). A message or summary deleted takes its
    vector with it.
    """

    def space(self) -> VectorSpace | None:
        """The embedder the stored vectors come from (``None``: none recorded yet)."""
        ...
    @checks(rules.vector_space)
    def set_space(self, space: VectorSpace) -> bool:
        """Record ``space``; when another one was recorded, every stored vector is dropped first (True)."""
        ...
    @checks(rules.stored_vectors)
    def put(self, vectors: Sequence[StoredVector]) -> int:
        """Store vectors of the recorded space's dimensions (one already stored is kept; an id no longer stored
        is skipped); how many were added. Without a recorded space, a ConflictError."""
        ...
    @checks(rules.unembedded_page)
    def unembedded(self, target: SearchTarget, *, after: str | None = None, limit: int) -> list[str]:
        """Up to ``limit`` ids of ``target`` (messages or summaries) without a vector, oldest first (messages
        by number, summaries by creation), only those after the id ``after`` (a page's last id) when given."""
        ...
    def counts(self) -> dict[SearchTarget, VectorCount]:
        """Per target (messages, summaries): how many have a vector, how many are stored, the newest with one."""
        ...
    @checks(rules.vector_query)
    def nearest(self, query: VectorQuery) -> list[SearchHit]:
        """The best ``limit`` hits by cosine similarity (``snippet`` empty), best first."""
        ...


class RedactionAdminRepository(Protocol):
    @checks(rules.redaction_counts)
    def add_counts(self, counts: Mapping[str, int]) -> None:
        """Additive per-category redaction counters."""
        ...
    def get_counts(self) -> dict[str, int]: ...
    def purge(self) -> None:
        """Atomically deletes all repository-owned mutable project state (memory, recall, counters)."""
        ...


class CoordinationRepository(Protocol):
    @checks(rules.session_ingest)
    def record_session_ingest(self, record: SessionIngestRecord) -> None: ...
    @checks(rules.session)
    def get_session_ingest(self, session_id: str) -> SessionIngestRecord | None: ...
    @checks(rules.lease_request)
    def acquire_lease(self, name: str, holder: str, ttl_seconds: float) -> Lease | None:
        """Grant (or re-grant to the same holder) unless another holder's lease is live.

        A live same-holder re-grant keeps its fence; any other grant (free, released, expired)
        gets a fence greater than every earlier one for ``name``.
        """
        ...
    @checks(rules.renewal)
    def renew_lease(self, lease: Lease, ttl_seconds: float) -> Lease:
        """Extend a live lease; ConflictError when it was lost (fence changed or expired)."""
        ...
    @checks(rules.held_lease)
    def release_lease(self, lease: Lease) -> None:
        """Frees the lease when ``lease`` is still the current grant; a stale release changes nothing."""
        ...
    @checks(rules.held_lease)
    def check_fence(self, lease: Lease) -> None:
        """ConflictError unless ``lease`` is still the live grant (call inside the final write)."""
        ...


class NativeTranscriptRepository(Protocol):
    """Immutable sanitized client-native records, exact message links, checkpoints."""

    @checks(rules.native_batch)
    def ingest_batch(
        self,
        records: Sequence[NativeRecordInput],
        *,
        source_key: str,
        expected: Checkpoint | None,
        new_checkpoint: Checkpoint,
    ) -> NativeBatchResult:
        """Insert records and advance the checkpoint in one transaction.

        ``expected`` is the compare-and-swap fence (``None``: no checkpoint
        yet); a mismatch raises ConflictError and writes nothing. An existing
        ingest key with identical data counts as skipped; with different data
        (or another source ordinal) it is a ConflictError.

        The stored checkpoint is ``new_checkpoint`` with ``revision`` = previous
        revision + 1 (1 for the first); ``new_checkpoint.revision`` is ignored.
        When the stored checkpoint already equals the target (ignoring revision)
        nothing is rewritten, and a stale ``expected`` is then accepted only if
        every record already exists identically (a committed retry: read-only).
        Identity for skipping excludes ``observed_at`` and ``scrubber_version``; a stored record
        without a message link that matches otherwise also counts as skipped and stays unlinked
        (records stored before their format mapped them to a message; native records never change).
        """
        ...
    @checks(rules.transcript_id)
    def get_by_id(self, transcript_id: int) -> NativeRecord | None: ...
    @checks(rules.native_session)
    def list_by_native_session(self, native_session_id: str) -> list[NativeRecord]: ...
    @checks(rules.source_locator)
    def list_by_source(self, source_locator: str) -> list[NativeRecord]: ...
    @checks(rules.message_id)
    def list_by_message(self, message_id: int) -> list[NativeRecord]: ...
    @checks(rules.source_key)
    def get_checkpoint(self, source_key: str) -> Checkpoint | None: ...


class PassiveInboxRepository(Protocol):
    """The shared inbox of passive events machines deliver (``storage.inbox``); a backend without
    ``Capabilities.passive_inbox`` raises UnsupportedCapabilityError from every method.

    Rows are the project's; the drain lease and the per-machine order span every project (a machine's
    sequence is installation-wide). Every write names the caller's drain ``lease`` and fails with
    ConflictError (``fence_mismatch``) unless it is the live grant, checked in the write's transaction.
    """

    @checks(rules.drain_lease)
    def acquire_drain_lease(self, machine_id: str, holder: str, ttl_seconds: float) -> Lease | None:
        """The drain lease of ``machine_id`` (``coordination.acquire_lease`` rules, timed by the backend's
        clock); ``None`` while another holder's grant is live."""
        ...
    @checks(rules.renewal)
    def renew_drain_lease(self, lease: Lease, ttl_seconds: float) -> Lease:
        """ConflictError (``lease_lost``) when the lease expired or was granted to another holder."""
        ...
    @checks(rules.held_lease)
    def release_drain_lease(self, lease: Lease) -> None: ...
    @checks(rules.inbox_events)
    def deliver(self, lease: Lease, events: Sequence[InboxEvent]) -> list[InboxRow]:
        """Store ``events`` (one machine's, in sequence order) and return their rows, in one transaction.

        An event already stored comes back as stored (the caller compares it: ``InboxRow.same_event``); a
        new one is accepted only when its ``prev_seq`` is the machine's last delivered sequence, else
        ConflictError ``sequence_gap`` and nothing of the call is stored. The same uuid with other data, or
        another uuid at a stored (machine, seq), is ConflictError ``event_mismatch``.
        """
        ...
    @checks(rules.event_uuids)
    def get(self, event_uuids: Sequence[str]) -> list[InboxRow]:
        """Rows by uuid, in the order asked, missing ones omitted (readback after an uncertain commit)."""
        ...
    @checks(rules.claim_request)
    def claim(self, lease: Lease, *, limit: int, ttl_seconds: float) -> list[InboxClaim]:
        """Claim up to ``limit`` due rows for ``ttl_seconds``: per machine, only the run of its lowest
        open sequences, while each is due (pending, retry due, or an expired claim) and this project's.
        Rows another caller holds are skipped without waiting, and a machine's run stops there."""
        ...
    @checks(rules.completion)
    def complete(self, lease: Lease, claim: InboxClaim, effect: PassiveEffect) -> None:
        """Record ``effect`` in the project's log and mark the row applied, keeping the claim's token.

        ConflictError ``claim_lost`` unless the row is still claimed with ``claim.token``, ``order`` while
        an earlier sequence of its machine is open. Call it in the transaction that writes the rest of the
        effect, so all of it commits once or not at all.
        """
        ...
    @checks(rules.failure)
    def fail(self, lease: Lease, claim: InboxClaim, error: str, *, quarantine: bool,
             retry_after_s: float) -> InboxRow:
        """Count a failed application: retry after ``retry_after_s`` (backend clock), or quarantine the row
        with ``error`` as its reason. ConflictError ``claim_lost`` as for ``complete``."""
        ...
    @checks(rules.prune_rows)
    def prune(self, lease: Lease, rows: Sequence[InboxRow]) -> list[PruneOutcome]:
        """Delete each row exactly as given (uuid, machine, seq, digest) when it is applied; one outcome each."""
        ...
    def quarantined(self) -> list[InboxRow]:
        """The project's quarantined rows, by machine then sequence."""
        ...
    @checks(rules.event_uuid)
    def replay(self, event_uuid: str) -> InboxRow:
        """Put a quarantined row back to pending, unchanged otherwise (attempts reset); NotFoundError when
        no such row, ConflictError ``not_quarantined`` when it is not quarantined."""
        ...
    def backlog(self) -> InboxBacklog: ...
    @checks(rules.path)
    def co_edits(self, path: str) -> dict[str, int]:
        """For each other file edited in a session that edited ``path`` (effects applied with ``co_edit``),
        how many such sessions there are."""
        ...


@runtime_checkable
class Repositories(Protocol):
    """The repositories of one project, bound either to autocommit or to one transaction."""

    conversations: ConversationRepository
    summaries: SummaryRepository
    context: ContextRepository
    large_files: LargeFileRepository
    promoted_memory: PromotedMemoryRepository
    recall: RecallRepository
    lexical_search: LexicalSearchRepository
    redaction_admin: RedactionAdminRepository
    coordination: CoordinationRepository
    native_transcripts: NativeTranscriptRepository
    passive_inbox: PassiveInboxRepository
    vectors: VectorRepository


class ProjectStorage(Repositories, Protocol):
    """One project's storage scope. The opener owns it and closes it."""

    project_id: str
    capabilities: Capabilities

    def transaction(self, fn: Callable[[Repositories], T]) -> T:
        """Run ``fn`` with repositories bound to one transaction.

        Commits on return; on error rolls everything back and re-raises a
        sanitized StorageError (the original error if it already is one).
        A nested call raises NestedTransactionError at once.
        """
        ...
    def prepare_writes(self, messages: Sequence[NewMessage], payloads: Sequence[tuple[str, NewMessage | None]]
                       ) -> None:
        """Ahead of a transaction that will insert ``messages`` and native records with ``payloads`` (each
        with the message it will be linked to, or None), encode them now, outside the write lock, so the
        transaction holds it for less (other processes importing into the project wait for it).

        Only a hint: it stores nothing and never changes what any later call stores or returns; a backend
        with nothing to gain does nothing. What a transaction did not use is dropped when it ends."""
        ...
    def health(self) -> Health: ...
    def stats(self) -> ProjectStats: ...
    def storage_usage(self, *, payloads: bool = True) -> StorageUsage:
        """Bytes per table and index, payload sizes plain and stored (read only with ``payloads``: it
        reads every payload), and reclaimable space."""
        ...
    def compact_storage(self, *, progress: Callable[[int], None] | None = None) -> MaintenanceReport:
        """Online-safe maintenance: rewrite payloads with the newest codec and give free space back, in
        short transactions (``progress`` gets the rows rewritten so far). Never changes what is read."""
        ...
    def close(self) -> None:
        """Idempotent; never affects other open projects."""
        ...


class StorageBackendFactory(Protocol):
    """Shared resources of one configured backend (pools, homes)."""

    name: str
    capabilities: Capabilities

    def open_project(self, project: ProjectRef) -> ProjectStorage:
        """Open (creating and migrating if needed) the storage of ``project``."""
        ...
    def open_existing_project(self, project: ProjectRef) -> ProjectStorage | None:
        """The storage of ``project`` when the backend holds it, else ``None``. Creates nothing (no directory,
        file, row or schema): what commands that only read open."""
        ...
    def list_projects(self) -> list[ProjectRef]: ...
    def health(self) -> Health: ...
    def check_integrity(self) -> list[Health]:
        """A deep read-only check of every project the backend holds, including any that no longer opens.

        One ``Health`` per project (domain ``integrity``), ``state`` ``ok``, ``corrupt`` (damaged: move it
        aside and re-import) or ``unavailable`` (could not be checked now); ``detail`` says where.
        """
        ...
    def close(self) -> None:
        """Idempotent; closes every project scope still open."""
        ...
