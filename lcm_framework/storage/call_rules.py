"""The argument rules of every repository call, by domain and method name (run by ``storage.checked``).

Each rule takes the ``Validator`` of its domain and exactly the arguments of the contract method it guards
(``tests/storage_rules`` checks names and signatures against ``storage.contracts``); it raises a typed
``DataValidationError``/``ConflictError`` or returns ``None``. ``None`` in the table: nothing to check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .models import Lease, Memory, NewMemory, SearchMode, SearchQuery, SearchTarget, SessionIngestRecord
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
}
