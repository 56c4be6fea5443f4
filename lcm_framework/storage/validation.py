"""Data rules enforced before any database access, shared by every adapter.

One implementation of each rule (and of the typed errors it raises) so every
backend refuses the same input with the same error type and code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ConflictError, DataValidationError, NotFoundError
from .models import (
    Checkpoint,
    LargeFile,
    NativeRecord,
    NativeRecordInput,
    NewMessage,
    NewPart,
    NewSummary,
    PartKind,
    RecallStats,
    Role,
    SubagentLink,
    SummaryKind,
    Surfacing,
)

MAX_SAFE_INT = 2**53 - 1

_CHECKPOINT_TEXTS = ("source_key", "prefix_sha256", "scrubber_version", "state_json")
_CHECKPOINT_COUNTS = ("revision", "byte_offset", "last_source_ordinal", "imported", "skipped", "quarantined")
_RECORD_TEXTS = ("ingest_key", "native_session_id", "source_locator", "payload_json", "content_sha256",
                 "scrubber_version")
_PART_TEXTS = ("text", "tool_call_id", "tool_name", "raw_json", "metadata")


class Validator:
    """Checks values and builds typed errors tagged with one backend/domain/project."""

    def __init__(self, backend: str, domain: str, project: str | None = None) -> None:
        self.backend = backend
        self.domain = domain
        self.project = project

    def invalid(self, message: str, code: str = "invalid") -> DataValidationError:
        return DataValidationError(message, backend=self.backend, domain=self.domain, project=self.project,
                                   code=code)

    def conflict(self, message: str, code: str = "conflict") -> ConflictError:
        return ConflictError(message, backend=self.backend, domain=self.domain, project=self.project, code=code)

    def not_found(self, what: str) -> NotFoundError:
        return NotFoundError(f"{what} does not exist", backend=self.backend, domain=self.domain,
                             project=self.project, code="not_found")

    def text(self, field: str, value: str | None) -> None:
        """Refuse U+0000 (and non-str values) in a text field."""
        if value is None:
            return
        if not isinstance(value, str):
            raise self.invalid(f"{field} must be text", "invalid_type")
        if "\x00" in value:
            raise self.invalid(f"{field} contains U+0000", "nul_character")

    def texts(self, field: str, values: Iterable[str | None]) -> None:
        for value in values:
            self.text(field, value)

    def count(self, field: str, value: int) -> None:
        """A non-negative integer within 2**53-1 (sequence, ordinal, token count)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.invalid(f"{field} must be an integer", "invalid_type")
        if value < 0 or value > MAX_SAFE_INT:
            raise self.invalid(f"{field} is outside 0..2^53-1", "integer_out_of_range")

    def optional_count(self, field: str, value: int | None) -> None:
        if value is not None:
            self.count(field, value)

    def ids(self, field: str, values: Sequence[int]) -> list[int]:
        """Every value a valid count; returned as a list in the given order."""
        for value in values:
            self.count(field, value)
        return list(values)

    def limit(self, limit: int | None) -> int | None:
        """``None``/negative: unlimited (None); else the bound. Non-integers are refused."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise self.invalid("limit must be an integer", "invalid_type")
        return effective_limit(limit)


class CheckedRepository:
    """Mixin for adapter repositories: typed errors (tagged like the core's) through their ``_check`` Validator."""

    _check: Validator

    def _not_found(self, what: str) -> NotFoundError:
        return self._check.not_found(what)

    def _conflict(self, message: str, code: str = "conflict") -> ConflictError:
        return self._check.conflict(message, code)

    def _invalid(self, message: str, code: str = "invalid") -> DataValidationError:
        return self._check.invalid(message, code)


def effective_limit(limit: int | None) -> int | None:
    """``None`` or negative: unlimited (returns None); otherwise the bound (0 = no rows)."""
    if limit is None or limit < 0:
        return None
    return limit


def validate_session(v: Validator, session_id: str, title: str | None) -> None:
    """A conversation's session id (text without U+0000) and optional title."""
    if not isinstance(session_id, str):
        raise v.invalid("session_id must be text", "invalid_type")
    v.text("session_id", session_id)
    v.text("title", title)


def validate_new_messages(v: Validator, messages: Sequence[NewMessage]) -> list[Role]:
    """Every message and part of a batch; returns each message's role."""
    roles = []
    for message in messages:
        try:
            roles.append(Role(message.role))
        except ValueError:
            raise v.invalid("role must be user, assistant, system or tool", "invalid_enum") from None
        if not isinstance(message.content, str):
            raise v.invalid("content must be text", "invalid_type")
        v.text("content", message.content)
        v.count("token_count", message.token_count)
        for part in message.parts:
            validate_new_part(v, part)
    return roles


def validate_new_part(v: Validator, part: NewPart) -> None:
    try:
        PartKind(part.kind)
    except ValueError:
        raise v.invalid("part kind is not a known kind", "invalid_enum") from None
    for name in _PART_TEXTS:
        v.text(f"part.{name}", getattr(part, name))


def validate_append(v: Validator, conversation_id: int, messages: Sequence[NewMessage]) -> list[Role]:
    """An ``append_messages`` call: the store allocates seq, so none may be given."""
    v.count("conversation_id", conversation_id)
    if any(m.seq is not None for m in messages):
        raise v.invalid("append_messages allocates seq; use insert_messages for explicit seq", "explicit_seq")
    return validate_new_messages(v, messages)


def validate_insert(v: Validator, conversation_id: int, messages: Sequence[NewMessage]) -> list[int]:
    """An ``insert_messages`` call: explicit, distinct seq on every message; returns the seqs in order."""
    v.count("conversation_id", conversation_id)
    seqs: list[int] = []
    for message in messages:
        if message.seq is None:
            raise v.invalid("insert_messages needs an explicit seq on every message", "missing_seq")
        v.count("seq", message.seq)
        seqs.append(message.seq)
    if len(set(seqs)) != len(seqs):
        raise v.conflict("the batch repeats a seq", "duplicate")
    validate_new_messages(v, messages)
    return seqs


def validate_new_summary(v: Validator, summary: NewSummary) -> SummaryKind:
    """A summary and its lineage shape (leaf: depth 0, messages; condensed: depth >= 1, parents)."""
    v.text("summary_id", summary.summary_id)
    if not summary.summary_id:
        raise v.invalid("summary_id must not be empty", "empty_id")
    v.count("conversation_id", summary.conversation_id)
    try:
        kind = SummaryKind(summary.kind)
    except ValueError:
        raise v.invalid("kind must be leaf or condensed", "invalid_enum") from None
    v.count("depth", summary.depth)
    v.text("content", summary.content)
    v.count("token_count", summary.token_count)
    v.count("descendant_count", summary.descendant_count)
    v.ids("source_message_id", summary.source_message_ids)
    v.texts("parent_id", summary.parent_ids)
    v.texts("file_id", summary.file_ids)
    if kind is SummaryKind.LEAF and (summary.depth != 0 or summary.parent_ids):
        raise v.invalid("a leaf summary has depth 0 and no parent summaries", "invalid_lineage")
    if kind is SummaryKind.CONDENSED and (summary.depth < 1 or summary.source_message_ids):
        raise v.invalid("a condensed summary has depth >= 1 and no source messages", "invalid_lineage")
    return kind


def validate_large_file(v: Validator, file: LargeFile) -> None:
    """Large-file metadata: texts free of U+0000, a non-empty id, counts in range."""
    for name in ("file_id", "file_name", "mime_type", "sha256", "exploration_summary"):
        v.text(name, getattr(file, name))
    if not file.file_id:
        raise v.invalid("file_id must not be empty", "empty_id")
    v.count("conversation_id", file.conversation_id)
    v.optional_count("message_id", file.message_id)
    v.count("byte_size", file.byte_size)
    v.count("token_count", file.token_count)


SUBAGENT_LINK_FIELDS = tuple(f.name for f in dataclasses.fields(SubagentLink))


def validate_subagent_link(v: Validator, link: SubagentLink) -> None:
    """A sub-agent link: texts free of U+0000, a non-empty parent session, ids in range."""
    for name in ("parent_session_id", "agent_id", "agent_type", "prompt_sha256", "tool_call_id"):
        v.text(name, getattr(link, name))
    if not link.parent_session_id:
        raise v.invalid("parent_session_id must not be empty", "empty_id")
    v.count("child_conversation_id", link.child_conversation_id)
    v.optional_count("parent_conversation_id", link.parent_conversation_id)
    v.optional_count("parent_message_id", link.parent_message_id)


def merged_link(stored: SubagentLink | None, given: SubagentLink) -> SubagentLink:
    """What ``link_subagent`` stores: ``given`` when nothing is stored, else the stored link with its
    missing (``None``) fields taken from ``given``."""
    if stored is None:
        return given
    fields = {f: getattr(stored, f) if getattr(stored, f) is not None else getattr(given, f)
              for f in SUBAGENT_LINK_FIELDS}
    return SubagentLink(**fields)


def validate_history(v: Validator, stats: RecallStats, surfacings: Sequence[Surfacing]) -> None:
    """A recall history to restore: counts in range, texts free of U+0000, every surfacing of the same target."""
    v.text("target_id", stats.target_id)
    for count in (stats.surfaced, stats.useful, stats.not_useful):
        v.count("count", count)
    v.texts("query", [s.query for s in surfacings])
    if any(s.target_id != stats.target_id for s in surfacings):
        raise v.invalid("every surfacing must name the target of the stats", "target_mismatch")


def validate_range(v: Validator, conversation_id: int, start_ordinal: int, end_ordinal: int, summary_id: str) -> None:
    """A context range to replace by one summary: ordinals in order, ids well formed."""
    v.count("conversation_id", conversation_id)
    v.count("start_ordinal", start_ordinal)
    v.count("end_ordinal", end_ordinal)
    v.text("summary_id", summary_id)
    if end_ordinal < start_ordinal:
        raise v.invalid("end_ordinal is before start_ordinal", "invalid_range")


def native_identity(r: NativeRecordInput | NativeRecord) -> tuple[Any, ...]:
    """What must match for a retry to count as skipped (observation time and scrubber version do not)."""
    return (r.ingest_key, r.format.client_name, r.format.format_name, r.format.format_version,
            r.native_session_id, r.source_locator, r.source_ordinal, r.payload_json, r.content_sha256, r.message_id)


def same_but_unlinked(stored: NativeRecord, record: NativeRecordInput) -> bool:
    """``stored`` is ``record`` without its message link: stored before its format mapped it to a message.
    Such a retry counts as skipped and the stored record stays as it is (native records never change)."""
    return (stored.message_id is None and record.message_id is not None
            and native_identity(dataclasses.replace(record, message_id=None)) == native_identity(stored))


def validate_native_batch(v: Validator, records: Sequence[NativeRecordInput], source_key: str,
                          expected: Checkpoint | None, new_checkpoint: Checkpoint) -> None:
    """A native ingest batch: its source key, both checkpoints (same source) and every record."""
    v.text("source_key", source_key)
    if not source_key:
        raise v.invalid("source_key must not be empty", "empty_id")
    for cp in (expected, new_checkpoint):
        if cp is None:
            continue
        for name in _CHECKPOINT_TEXTS:
            v.text(f"checkpoint.{name}", getattr(cp, name))
        for name in _CHECKPOINT_COUNTS:
            v.count(f"checkpoint.{name}", getattr(cp, name))
        if cp.source_key != source_key:
            raise v.invalid("the checkpoint belongs to another source_key", "source_key_mismatch")
    checked_format = None
    for record in records:
        for name in _RECORD_TEXTS:
            value = getattr(record, name)
            if value.__class__ is not str or "\x00" in value:  # the common case without a call
                v.text(name, value)
        if record.format is not checked_format:  # a batch shares one FormatIdentity object
            fmt = checked_format = record.format
            v.texts("format", (fmt.client_name, fmt.format_name, fmt.format_version))
        if not record.ingest_key:
            raise v.invalid("ingest_key must not be empty", "empty_id")
        v.count("source_ordinal", record.source_ordinal)
        v.optional_count("message_id", record.message_id)
