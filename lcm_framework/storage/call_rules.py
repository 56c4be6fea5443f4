"""The argument rules of the repository calls, and ``checks``, which declares one on its contract method.

A contract method in ``storage.contracts`` names its rule next to its signature (``@checks(rule)``); the rule
takes the ``Validator`` of its domain and exactly the method's arguments (mypy checks that through the
decorator's ``ParamSpec``), and raises a typed ``DataValidationError``/``ConflictError`` or returns ``None``.
A method without arguments needs no rule; one with arguments and no rule is refused when
``storage.checked`` builds its wrapper. ``storage.checked`` runs the rule before the adapter sees the call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from .inbox import InboxClaim, InboxEvent, InboxRow, PassiveEffect
from .models import (
    Checkpoint,
    Lease,
    Memory,
    NativeRecordInput,
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
    validate_native_batch,
    validate_session,
)

Rule = Callable[..., Any]
P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")
RULE_ATTRIBUTE = "__storage_rule__"


def checks(rule: Callable[Concatenate[Validator, P], object]
           ) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """Declare ``rule`` as the argument check of the contract method it decorates (the method is unchanged)."""
    def declare(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        setattr(method, RULE_ATTRIBUTE, rule)
        return method
    return declare


def declared_rule(method: Callable[..., Any]) -> Rule | None:
    """The rule ``checks`` declared on a contract method, ``None`` when it declares none."""
    rule: Rule | None = getattr(method, RULE_ATTRIBUTE, None)
    return rule

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


def new_memory(v: Validator, memory: NewMemory) -> None:
    stored_memory(v, memory)


def restored_memory(v: Validator, memory: Memory) -> None:
    stored_memory(v, memory)


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


def renewal(v: Validator, lease: Lease, ttl_seconds: float) -> None:
    held_lease(v, lease)
    lease_request(v, lease.name, lease.holder, ttl_seconds)


def event_uuid(v: Validator, event_uuid: str) -> None:
    """A transport UUID in canonical lower-case form."""
    if not isinstance(event_uuid, str) or not _UUID.fullmatch(event_uuid):
        raise v.invalid("an event uuid must be a lower-case UUID", "invalid_uuid")


def event_uuids(v: Validator, event_uuids: Sequence[str]) -> None:
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


def held_claim(v: Validator, lease: Lease, claim: InboxClaim) -> None:
    held_lease(v, lease)
    event_uuid(v, claim.event_uuid)
    v.text("token", claim.token)


def completion(v: Validator, lease: Lease, claim: InboxClaim, effect: PassiveEffect) -> None:
    held_claim(v, lease, claim)
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


def failure(v: Validator, lease: Lease, claim: InboxClaim, error: str, *, quarantine: bool,
          retry_after_s: float) -> None:
    held_claim(v, lease, claim)
    v.text("error", error)
    if isinstance(retry_after_s, bool) or not isinstance(retry_after_s, int | float) \
            or not math.isfinite(retry_after_s) or not 0 <= retry_after_s <= MAX_LEASE_SECONDS:
        raise v.invalid("retry_after_s must be a non-negative number", "invalid_delay")


def claim_request(v: Validator, lease: Lease, *, limit: int, ttl_seconds: float) -> None:
    held_lease(v, lease)
    v.count("limit", limit)
    lease_request(v, lease.name, lease.holder, ttl_seconds)


def prune_rows(v: Validator, lease: Lease, rows: Sequence[InboxRow]) -> None:
    held_lease(v, lease)
    for row in rows:
        event_uuid(v, row.event_uuid)
        v.text("machine_id", row.machine_id)
        v.count("seq", row.seq)
        v.text("digest", row.digest)


def drain_lease(v: Validator, machine_id: str, holder: str, ttl_seconds: float) -> None:
    lease_request(v, machine_id, holder, ttl_seconds)


def messages_of(v: Validator, conversation_id: int, message_ids: Sequence[int]) -> None:
    v.count("conversation_id", conversation_id)
    v.ids("message_id", message_ids)


def message_page(v: Validator, conversation_id: int, *, after_seq: int | None = None,
                   limit: int | None = None) -> None:
    v.count("conversation_id", conversation_id)
    v.optional_count("after_seq", after_seq)
    v.limit(limit)


def content_match(v: Validator, conversation_id: int, role: str, content: str) -> None:
    v.count("conversation_id", conversation_id)
    v.text("role", role)
    v.text("content", content)


def summary_page(v: Validator, conversation_id: int, *, depth: int | None = None) -> None:
    v.count("conversation_id", conversation_id)
    v.optional_count("depth", depth)


def surfacing(v: Validator, target_ids: Sequence[str], *, query: str | None = None) -> None:
    v.texts("target_id", target_ids)
    v.text("query", query)


def session_ingest(v: Validator, record: SessionIngestRecord) -> None:
    v.text("session_id", record.session_id)
    v.text("source", record.source)
    v.count("message_count", record.message_count)


def conversation(v: Validator, conversation_id: int) -> None:
    v.count("conversation_id", conversation_id)


def memory_id(v: Validator, memory_id: int) -> None:
    v.count("memory_id", memory_id)


def confidence_update(v: Validator, memory_id: int, confidence: float, *, metadata: str | None = None) -> None:
    v.count("memory_id", memory_id)
    memory_confidence(v, confidence)
    v.text("metadata", metadata)


def summary_id(v: Validator, summary_id: str) -> None:
    v.text("summary_id", summary_id)


def message_ids(v: Validator, message_ids: Sequence[int]) -> None:
    v.ids("message_id", message_ids)


def target(v: Validator, target_id: str) -> None:
    v.text("target_id", target_id)


def new_session(v: Validator, session_id: str, *, title: str | None = None) -> None:
    validate_session(v, session_id, title)


def session(v: Validator, session_id: str) -> None:
    v.text("session_id", session_id)


def conversations_of(v: Validator, session_id: str) -> None:
    validate_session(v, session_id, None)


def limit(v: Validator, *, limit: int | None = None) -> None:
    v.limit(limit)


def child(v: Validator, child_conversation_id: int) -> None:
    v.count("child_conversation_id", child_conversation_id)


def parent_session(v: Validator, *, parent_session_id: str | None = None) -> None:
    v.text("parent_session_id", parent_session_id)


def summary_ids(v: Validator, summary_ids: Sequence[str]) -> None:
    v.texts("summary_id", summary_ids)


def optional_conversation(v: Validator, conversation_id: int | None = None) -> None:
    v.optional_count("conversation_id", conversation_id)


def file_id(v: Validator, file_id: str) -> None:
    v.text("file_id", file_id)


def memory_filter(v: Validator, *, include_archived: bool = False, tag: str | None = None) -> None:
    v.text("tag", tag)


def stale(v: Validator, *, older_than: datetime, max_confidence: float) -> None:
    memory_confidence(v, max_confidence)


def feedback(v: Validator, target_id: str, *, useful: bool) -> None:
    v.text("target_id", target_id)


def target_ids(v: Validator, target_ids: Sequence[str]) -> None:
    v.texts("target_id", target_ids)


def native_batch(v: Validator, records: Sequence[NativeRecordInput], *, source_key: str,
                  expected: Checkpoint | None, new_checkpoint: Checkpoint) -> None:
    validate_native_batch(v, records, source_key, expected, new_checkpoint)


def transcript_id(v: Validator, transcript_id: int) -> None:
    v.count("transcript_id", transcript_id)


def native_session(v: Validator, native_session_id: str) -> None:
    v.text("native_session_id", native_session_id)


def source_locator(v: Validator, source_locator: str) -> None:
    v.text("source_locator", source_locator)


def message_id(v: Validator, message_id: int) -> None:
    v.count("message_id", message_id)


def source_key(v: Validator, source_key: str) -> None:
    v.text("source_key", source_key)


def path(v: Validator, path: str) -> None:
    v.text("path", path)


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
