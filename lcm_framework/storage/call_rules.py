"""The argument rules of every repository call, by domain and method name (run by ``storage.checked``).

Each rule takes the ``Validator`` of its domain and exactly the arguments of the contract method it guards
(``tests/storage_rules`` checks names and signatures against ``storage.contracts``); it raises a typed
``DataValidationError``/``ConflictError`` or returns ``None``. ``None`` in the table: nothing to check.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .inbox import InboxClaim, InboxEvent, InboxRow, PassiveEffect
from .models import (
    Lease,
    Memory,
    NewMemory,
    SearchMode,
    SearchQuery,
    SearchTarget,
    SessionIngestRecord,
    StoredVector,
    VectorQuery,
    VectorSpace,
)
from .validation import (
    Validator,
    validate_append,
    validate_history,
    validate_insert,
    validate_large_file,
    validate_native_batch,
    validate_new_summary,
    validate_range,
    validate_session,
    validate_subagent_link,
)

Rule = Callable[..., Any]

MAX_LEASE_SECONDS = 10**9
MAX_INBOX_BATCH = 10_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DIGEST = re.compile(r"[0-9a-f]{64}")


def memory_confidence(v: Validator, value: float) -> None:
    """A memory confidence: a finite number in 0..1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise v.invalid("confidence must be a number in 0..1", "invalid_confidence")


def stored_memory(v: Validator, memory: NewMemory | Memory) -> None:
    """A memory to store: texts free of U+0000, a valid confidence."""
    v.text("content", memory.content)
    v.texts("tag", memory.tags)
    v.text("source_summary_id", memory.source_summary_id)
    v.text("metadata", memory.metadata)
    memory_confidence(v, memory.confidence)


def search_query(v: Validator, query: SearchQuery) -> None:
    """A lexical search: its text, a known mode and target, an optional conversation and a limit."""
    if not isinstance(query.text, str):
        raise v.invalid("query text must be text", "invalid_type")
    v.text("text", query.text)
    v.optional_count("conversation_id", query.conversation_id)
    v.limit(query.limit)
    try:
        SearchMode(query.mode)
        SearchTarget(query.target)
    except ValueError:
        raise v.invalid("unknown search mode or target", "invalid_enum") from None


def redaction_counts(v: Validator, counts: Mapping[str, int]) -> None:
    """Redaction counters to add: categories free of U+0000, counts in range."""
    for category, count in counts.items():
        v.text("category", category)
        v.count("count", count)


def held_lease(v: Validator, lease: Lease) -> None:
    """A lease a caller holds: texts free of U+0000 and a fence in range."""
    v.text("name", lease.name)
    v.text("holder", lease.holder)
    v.count("fence", lease.fence)


def lease_request(v: Validator, name: str, holder: str, ttl_seconds: float) -> None:
    """A grant or renewal: non-empty name and holder, a positive finite ttl up to ``MAX_LEASE_SECONDS``."""
    v.text("name", name)
    v.text("holder", holder)
    if not name or not holder:
        raise v.invalid("lease name and holder must not be empty", "empty_id")
    if isinstance(ttl_seconds, bool) or not isinstance(ttl_seconds, int | float) \
            or not math.isfinite(ttl_seconds) or not 0 < ttl_seconds <= MAX_LEASE_SECONDS:
        raise v.invalid("ttl_seconds must be a positive number", "invalid_ttl")


def _renewal(v: Validator, lease: Lease, ttl_seconds: float) -> None:
    held_lease(v, lease)
    lease_request(v, lease.name, lease.holder, ttl_seconds)


def event_uuid(v: Validator, event_uuid: str) -> None:
    """A transport UUID in canonical lower-case form."""
    if not isinstance(event_uuid, str) or not _UUID.fullmatch(event_uuid):
        raise v.invalid("an event uuid must be a lower-case UUID", "invalid_uuid")


def _event_uuids(v: Validator, event_uuids: Sequence[str]) -> None:
    for value in event_uuids:
        event_uuid(v, value)


def inbox_events(v: Validator, lease: Lease, events: Sequence[InboxEvent]) -> None:
    """One machine's events in rising sequence order, each chained to the one before it."""
    held_lease(v, lease)
    if len(events) > MAX_INBOX_BATCH:
        raise v.invalid(f"at most {MAX_INBOX_BATCH} events per delivery", "batch_too_large")
    for position, item in enumerate(events):
        event_uuid(v, item.event_uuid)
        v.text("machine_id", item.machine_id)
        v.text("event", item.event)
        v.text("payload", item.payload)
        v.count("version", item.version)
        v.count("seq", item.seq)
        v.optional_count("prev_seq", item.prev_seq)
        if not item.machine_id or not item.event or item.version < 1 or item.seq < 1:
            raise v.invalid("an event needs a machine, a name, a version and a sequence from 1", "invalid_event")
        if item.prev_seq is not None and item.prev_seq >= item.seq:
            raise v.invalid("an event's previous sequence must be lower than its own", "invalid_sequence")
        if not isinstance(item.digest, str) or not _DIGEST.fullmatch(item.digest):
            raise v.invalid("an event digest must be a lower-case SHA-256", "invalid_digest")
        if item.created_at.tzinfo is None:
            raise v.invalid("an event's created_at must be timezone-aware", "naive_datetime")
        if position and (item.machine_id != events[0].machine_id or item.prev_seq != events[position - 1].seq):
            raise v.invalid("one delivery holds one machine's events, each chained to the one before",
                            "invalid_sequence")


def _claim(v: Validator, lease: Lease, claim: InboxClaim) -> None:
    held_lease(v, lease)
    event_uuid(v, claim.event_uuid)
    v.text("token", claim.token)


def _complete(v: Validator, lease: Lease, claim: InboxClaim, effect: PassiveEffect) -> None:
    _claim(v, lease, claim)
    for name in ("session_id", "tool_name", "status", "detail"):
        value = getattr(effect, name)
        if value is not None and not isinstance(value, str):
            raise v.invalid(f"effect {name} must be text", "invalid_type")
        v.text(name, value)
    if not isinstance(effect.co_edit, bool):
        raise v.invalid("effect co_edit must be a boolean", "invalid_type")
    if isinstance(effect.files, str) or not all(isinstance(f, str) and f for f in effect.files):
        raise v.invalid("effect files must be a list of non-empty paths", "invalid_type")
    v.texts("file", effect.files)


def _fail(v: Validator, lease: Lease, claim: InboxClaim, error: str, *, quarantine: bool,
          retry_after_s: float) -> None:
    _claim(v, lease, claim)
    v.text("error", error)
    if isinstance(retry_after_s, bool) or not isinstance(retry_after_s, int | float) \
            or not math.isfinite(retry_after_s) or not 0 <= retry_after_s <= MAX_LEASE_SECONDS:
        raise v.invalid("retry_after_s must be a non-negative number", "invalid_delay")


def _claim_request(v: Validator, lease: Lease, *, limit: int, ttl_seconds: float) -> None:
    held_lease(v, lease)
    v.count("limit", limit)
    lease_request(v, lease.name, lease.holder, ttl_seconds)


def _prune(v: Validator, lease: Lease, rows: Sequence[InboxRow]) -> None:
    held_lease(v, lease)
    for row in rows:
        event_uuid(v, row.event_uuid)
        v.text("machine_id", row.machine_id)
        v.count("seq", row.seq)
        v.text("digest", row.digest)


def _drain_lease(v: Validator, machine_id: str, holder: str, ttl_seconds: float) -> None:
    lease_request(v, machine_id, holder, ttl_seconds)


def _messages_of(v: Validator, conversation_id: int, message_ids: Sequence[int]) -> None:
    v.count("conversation_id", conversation_id)
    v.ids("message_id", message_ids)


def _list_messages(v: Validator, conversation_id: int, *, after_seq: int | None = None,
                   limit: int | None = None) -> None:
    v.count("conversation_id", conversation_id)
    v.optional_count("after_seq", after_seq)
    v.limit(limit)


def _find_by_content(v: Validator, conversation_id: int, role: str, content: str) -> None:
    v.count("conversation_id", conversation_id)
    v.text("role", role)
    v.text("content", content)


def _list_summaries(v: Validator, conversation_id: int, *, depth: int | None = None) -> None:
    v.count("conversation_id", conversation_id)
    v.optional_count("depth", depth)


def _surfacing(v: Validator, target_ids: Sequence[str], *, query: str | None = None) -> None:
    v.texts("target_id", target_ids)
    v.text("query", query)


def _session_ingest(v: Validator, record: SessionIngestRecord) -> None:
    v.text("session_id", record.session_id)
    v.text("source", record.source)
    v.count("message_count", record.message_count)


def _conversation(v: Validator, conversation_id: int) -> None:
    v.count("conversation_id", conversation_id)


def _memory_id(v: Validator, memory_id: int) -> None:
    v.count("memory_id", memory_id)


def _set_confidence(v: Validator, memory_id: int, confidence: float, *, metadata: str | None = None) -> None:
    v.count("memory_id", memory_id)
    memory_confidence(v, confidence)
    v.text("metadata", metadata)


def _summary_id(v: Validator, summary_id: str) -> None:
    v.text("summary_id", summary_id)


def _message_ids(v: Validator, message_ids: Sequence[int]) -> None:
    v.ids("message_id", message_ids)


def _target(v: Validator, target_id: str) -> None:
    v.text("target_id", target_id)


def _vector_target(v: Validator, target: SearchTarget) -> None:
    if target not in (SearchTarget.MESSAGES, SearchTarget.SUMMARIES):
        raise v.invalid("vectors are stored for messages and summaries only", "invalid_enum")


def vector_space(v: Validator, space: VectorSpace) -> None:
    """An embedder name free of U+0000 and a positive number of dimensions."""
    v.text("embedder", space.embedder)
    v.count("dimensions", space.dimensions)
    if not space.embedder or space.dimensions < 1:
        raise v.invalid("a vector space needs an embedder name and at least one dimension", "invalid_space")


def stored_vectors(v: Validator, vectors: Sequence[StoredVector]) -> None:
    """Vectors of messages or summaries: an id free of U+0000, the quantized bytes."""
    for item in vectors:
        _vector_target(v, item.target)
        v.text("target_id", item.target_id)
        if not isinstance(item.vector, bytes):
            raise v.invalid("a stored vector must be bytes", "invalid_type")


def unembedded_page(v: Validator, target: SearchTarget, *, after: str | None = None, limit: int) -> None:
    _vector_target(v, target)
    v.text("after", after)
    v.count("limit", limit)


def vector_query(v: Validator, query: VectorQuery) -> None:
    """A nearest-vector query: messages or summaries, finite numbers, an optional conversation and a limit."""
    _vector_target(v, query.target)
    if not query.vector or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                                   for x in query.vector):
        raise v.invalid("a query vector must be finite numbers", "invalid_vector")
    v.count("limit", query.limit)
    v.optional_count("conversation_id", query.conversation_id)


RULES: dict[str, dict[str, Rule | None]] = {
    "conversations": {
        "create_conversation": lambda v, session_id, *, title=None: validate_session(v, session_id, title),
        "get_or_create_conversation": lambda v, session_id, *, title=None: validate_session(v, session_id, title),
        "get_conversation": _conversation,
        "find_conversations": lambda v, session_id: validate_session(v, session_id, None),
        "list_conversations": lambda v, *, limit=None: v.limit(limit),
        "append_messages": validate_append,
        "insert_messages": validate_insert,
        "list_messages": _list_messages,
        "get_messages": _message_ids,
        "find_message_by_content": _find_by_content,
        "list_parts": _message_ids,
        "message_count": _conversation,
        "delete_messages": _message_ids,
        "link_subagent": validate_subagent_link,
        "get_subagent_link": lambda v, child_conversation_id: v.count("child_conversation_id",
                                                                      child_conversation_id),
        "list_subagent_links": lambda v, *, parent_session_id=None: v.text("parent_session_id", parent_session_id),
    },
    "summaries": {
        "create_summary": validate_new_summary,
        "get_summary": _summary_id,
        "get_summaries": lambda v, summary_ids: v.texts("summary_id", summary_ids),
        "list_summaries": _list_summaries,
        "source_message_ids": _summary_id,
        "parent_ids": _summary_id,
        "child_ids": _summary_id,
        "summaries_for_messages": _message_ids,
        "count_by_depth": lambda v, conversation_id=None: v.optional_count("conversation_id", conversation_id),
    },
    "context": {
        "list_items": _conversation,
        "append_messages": _messages_of,
        "replace_range": validate_range,
        "token_total": _conversation,
        "depths": _conversation,
    },
    "large_files": {
        "create_file": validate_large_file,
        "get_file": lambda v, file_id: v.text("file_id", file_id),
        "list_files": _conversation,
    },
    "promoted_memory": {
        "create_memory": stored_memory,
        "restore_memory": stored_memory,
        "get_memory": _memory_id,
        "list_memories": lambda v, *, include_archived=False, tag=None: v.text("tag", tag),
        "set_confidence": _set_confidence,
        "archive": _memory_id,
        "revive": _memory_id,
        "stale_candidates": lambda v, *, older_than, max_confidence: memory_confidence(v, max_confidence),
        "delete_memory": _memory_id,
    },
    "recall": {
        "record_surfacing": _surfacing,
        "record_feedback": lambda v, target_id, *, useful: v.text("target_id", target_id),
        "stats": _target,
        "surfacings": _target,
        "restore_history": validate_history,
        "forget": lambda v, target_ids: v.texts("target_id", target_ids),
    },
    "lexical_search": {
        "search": search_query,
    },
    "redaction_admin": {
        "add_counts": redaction_counts,
        "get_counts": None,
        "purge": None,
    },
    "coordination": {
        "record_session_ingest": _session_ingest,
        "get_session_ingest": lambda v, session_id: v.text("session_id", session_id),
        "acquire_lease": lease_request,
        "renew_lease": _renewal,
        "release_lease": held_lease,
        "check_fence": held_lease,
    },
    "native_transcripts": {
        "ingest_batch": lambda v, records, *, source_key, expected, new_checkpoint: validate_native_batch(
            v, records, source_key, expected, new_checkpoint),
        "get_by_id": lambda v, transcript_id: v.count("transcript_id", transcript_id),
        "list_by_native_session": lambda v, native_session_id: v.text("native_session_id", native_session_id),
        "list_by_source": lambda v, source_locator: v.text("source_locator", source_locator),
        "list_by_message": lambda v, message_id: v.count("message_id", message_id),
        "get_checkpoint": lambda v, source_key: v.text("source_key", source_key),
    },
    "passive_inbox": {
        "acquire_drain_lease": _drain_lease,
        "renew_drain_lease": _renewal,
        "release_drain_lease": held_lease,
        "deliver": inbox_events,
        "get": _event_uuids,
        "claim": _claim_request,
        "complete": _complete,
        "fail": _fail,
        "prune": _prune,
        "quarantined": None,
        "replay": event_uuid,
        "backlog": None,
        "co_edits": lambda v, path: v.text("path", path),
    },
    "vectors": {
        "space": None,
        "set_space": vector_space,
        "put": stored_vectors,
        "unembedded": unembedded_page,
        "counts": None,
        "nearest": vector_query,
    },
}
