"""Data rules enforced before any database access: U+0000 and integer ranges, in every repository."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from lcm_framework.errors import DataValidationError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import (
    Checkpoint,
    FormatIdentity,
    LargeFile,
    Lease,
    NativeRecordInput,
    NewMemory,
    NewMessage,
    NewPart,
    NewSummary,
    PartKind,
    Role,
    SearchMode,
    SearchQuery,
    SessionIngestRecord,
    SummaryKind,
)

NUL = "bad\x00text"
BIG = 2**53
NOW = datetime(2024, 1, 1, tzinfo=UTC)
FMT = FormatIdentity("claude-code", "jsonl", "1")


@dataclass
class Base:
    cid: int
    mid: int


def message(**kw: Any) -> NewMessage:
    return NewMessage(**{"role": Role.USER, "content": "ok", "token_count": 1, **kw})


def record(**kw: Any) -> NativeRecordInput:
    fields = {"ingest_key": "k1", "format": FMT, "native_session_id": "n", "source_locator": "a.jsonl",
              "source_ordinal": 0, "payload_json": "{}", "content_sha256": "0" * 64, "scrubber_version": "1",
              "observed_at": NOW}
    return NativeRecordInput(**{**fields, **kw})


def checkpoint(**kw: Any) -> Checkpoint:
    fields = {"source_key": "src", "revision": 0, "byte_offset": 0, "prefix_sha256": "0" * 64,
              "scrubber_version": "1", "last_source_ordinal": 0, "imported": 0, "skipped": 0, "quarantined": 0}
    return Checkpoint(**{**fields, **kw})


def summary(b: Base, **kw: Any) -> NewSummary:
    fields = {"summary_id": "sum_v", "conversation_id": b.cid, "kind": SummaryKind.LEAF, "depth": 0,
              "content": "c", "token_count": 1, "earliest_at": None, "latest_at": None, "descendant_count": 0,
              "source_message_ids": [b.mid]}
    return NewSummary(**{**fields, **kw})


def large_file(b: Base, **kw: Any) -> LargeFile:
    fields = {"file_id": "file_v", "conversation_id": b.cid, "message_id": None, "file_name": "f.txt",
              "mime_type": "text/plain", "byte_size": 1, "token_count": 1, "sha256": "0" * 64,
              "exploration_summary": "e", "created_at": NOW}
    return LargeFile(**{**fields, **kw})


Call = Callable[[ProjectStorage, Base], object]
LEASE = Lease("lease", "holder", 1, NOW)

CASES: dict[str, Call] = {
    # conversations
    "session NUL": lambda p, b: p.conversations.create_conversation(NUL),
    "title NUL": lambda p, b: p.conversations.create_conversation("s", title=NUL),
    "get_or_create NUL": lambda p, b: p.conversations.get_or_create_conversation(NUL),
    "find NUL": lambda p, b: p.conversations.find_conversations(NUL),
    "content NUL": lambda p, b: p.conversations.append_messages(b.cid, [message(), message(content=NUL)]),
    "part text NUL": lambda p, b: p.conversations.append_messages(
        b.cid, [message(parts=[NewPart(PartKind.TEXT, text=NUL)])]),
    "part metadata NUL": lambda p, b: p.conversations.append_messages(
        b.cid, [message(parts=[NewPart(PartKind.TEXT, text="t", metadata=NUL)])]),
    "part raw_json NUL": lambda p, b: p.conversations.append_messages(
        b.cid, [message(parts=[NewPart(PartKind.TOOL_CALL, raw_json=NUL)])]),
    "token_count negative": lambda p, b: p.conversations.append_messages(b.cid, [message(token_count=-1)]),
    "token_count too big": lambda p, b: p.conversations.append_messages(b.cid, [message(token_count=BIG)]),
    "token_count float": lambda p, b: p.conversations.append_messages(b.cid, [message(token_count=1.5)]),
    "token_count bool": lambda p, b: p.conversations.append_messages(b.cid, [message(token_count=True)]),
    "bad role": lambda p, b: p.conversations.append_messages(b.cid, [message(role="wizard")]),
    "seq too big": lambda p, b: p.conversations.insert_messages(b.cid, [message(seq=BIG)]),
    "seq negative": lambda p, b: p.conversations.insert_messages(b.cid, [message(seq=-1)]),
    "insert without seq": lambda p, b: p.conversations.insert_messages(b.cid, [message()]),
    "after_seq negative": lambda p, b: p.conversations.list_messages(b.cid, after_seq=-1),
    "after_seq too big": lambda p, b: p.conversations.list_messages(b.cid, after_seq=BIG),
    "limit float": lambda p, b: p.conversations.list_messages(b.cid, limit=1.5),  # type: ignore[arg-type]
    "conversation id negative": lambda p, b: p.conversations.get_conversation(-1),
    "find content NUL": lambda p, b: p.conversations.find_message_by_content(b.cid, "user", NUL),
    "get_messages too big": lambda p, b: p.conversations.get_messages([BIG]),
    "delete ids negative": lambda p, b: p.conversations.delete_messages([b.mid, -1]),
    # summaries
    "summary content NUL": lambda p, b: p.summaries.create_summary(summary(b, content=NUL)),
    "summary id NUL": lambda p, b: p.summaries.create_summary(summary(b, summary_id=NUL)),
    "summary tokens too big": lambda p, b: p.summaries.create_summary(summary(b, token_count=BIG)),
    "summary descendants negative": lambda p, b: p.summaries.create_summary(summary(b, descendant_count=-1)),
    "summary file id NUL": lambda p, b: p.summaries.create_summary(summary(b, file_ids=[NUL])),
    "summary source negative": lambda p, b: p.summaries.create_summary(summary(b, source_message_ids=[-1])),
    "get summary NUL": lambda p, b: p.summaries.get_summary(NUL),
    "list depth negative": lambda p, b: p.summaries.list_summaries(b.cid, depth=-1),
    # context
    "context ids negative": lambda p, b: p.context.append_messages(b.cid, [-1]),
    "replace ordinal too big": lambda p, b: p.context.replace_range(b.cid, 0, BIG, "sum"),
    "replace summary NUL": lambda p, b: p.context.replace_range(b.cid, 0, 0, NUL),
    # large files
    "file summary NUL": lambda p, b: p.large_files.create_file(large_file(b, exploration_summary=NUL)),
    "file name NUL": lambda p, b: p.large_files.create_file(large_file(b, file_name=NUL)),
    "file size negative": lambda p, b: p.large_files.create_file(large_file(b, byte_size=-1)),
    # promoted memory
    "memory content NUL": lambda p, b: p.promoted_memory.create_memory(NewMemory(NUL)),
    "memory tag NUL": lambda p, b: p.promoted_memory.create_memory(NewMemory("m", tags=("ok", NUL))),
    "memory metadata NUL": lambda p, b: p.promoted_memory.create_memory(NewMemory("m", metadata=NUL)),
    "memory confidence out of range": lambda p, b: p.promoted_memory.create_memory(NewMemory("m", confidence=1.5)),
    "memory list tag NUL": lambda p, b: p.promoted_memory.list_memories(tag=NUL),
    "memory id negative": lambda p, b: p.promoted_memory.archive(-1),
    # recall
    "recall target NUL": lambda p, b: p.recall.record_surfacing(["ok", NUL]),
    "recall query NUL": lambda p, b: p.recall.record_surfacing(["ok"], query=NUL),
    "feedback NUL": lambda p, b: p.recall.record_feedback(NUL, useful=True),
    # search
    "search NUL": lambda p, b: p.lexical_search.search(SearchQuery(NUL)),
    "search substring NUL": lambda p, b: p.lexical_search.search(SearchQuery(NUL, mode=SearchMode.SUBSTRING)),
    "search conversation negative": lambda p, b: p.lexical_search.search(SearchQuery("x", conversation_id=-1)),
    # redaction admin
    "redaction category NUL": lambda p, b: p.redaction_admin.add_counts({"ok": 1, NUL: 1}),
    "redaction count negative": lambda p, b: p.redaction_admin.add_counts({"ok": 1, "bad": -1}),
    "redaction count too big": lambda p, b: p.redaction_admin.add_counts({"ok": BIG}),
    # coordination
    "ingest session NUL": lambda p, b: p.coordination.record_session_ingest(
        SessionIngestRecord(NUL, "claude", NOW, 1)),
    "ingest count negative": lambda p, b: p.coordination.record_session_ingest(
        SessionIngestRecord("s", "claude", NOW, -1)),
    "lease name NUL": lambda p, b: p.coordination.acquire_lease(NUL, "h", 10),
    "lease holder NUL": lambda p, b: p.coordination.acquire_lease("l", NUL, 10),
    "lease ttl negative": lambda p, b: p.coordination.acquire_lease("l", "h", -1),
    "check fence NUL": lambda p, b: p.coordination.check_fence(Lease(NUL, "h", 1, NOW)),
    # native transcripts
    "native payload NUL": lambda p, b: p.native_transcripts.ingest_batch(
        [record(), record(ingest_key="k2", source_ordinal=1, payload_json='{"a": "\x00"}')],
        source_key="src", expected=None, new_checkpoint=checkpoint()),
    "native ordinal too big": lambda p, b: p.native_transcripts.ingest_batch(
        [record(source_ordinal=BIG)], source_key="src", expected=None, new_checkpoint=checkpoint()),
    "native checkpoint offset negative": lambda p, b: p.native_transcripts.ingest_batch(
        [record()], source_key="src", expected=None, new_checkpoint=checkpoint(byte_offset=-1)),
    "native checkpoint state NUL": lambda p, b: p.native_transcripts.ingest_batch(
        [record()], source_key="src", expected=None, new_checkpoint=checkpoint(state_json=NUL)),
    "native source key NUL": lambda p, b: p.native_transcripts.get_checkpoint(NUL),
    "native session NUL": lambda p, b: p.native_transcripts.list_by_native_session(NUL),
    # rules both backends now share (each used to apply only on one)
    "lease name empty": lambda p, b: p.coordination.acquire_lease("", "h", 10),
    "lease ttl too long": lambda p, b: p.coordination.acquire_lease("l", "h", 10**9 + 1),
    "renew fence negative": lambda p, b: p.coordination.renew_lease(Lease("l", "h", -1, NOW), 10),
    "set confidence out of range": lambda p, b: p.promoted_memory.set_confidence(1, -0.5),
    "stale max_confidence NaN": lambda p, b: p.promoted_memory.stale_candidates(older_than=NOW,
                                                                              max_confidence=float("nan")),
    "search unknown mode": lambda p, b: p.lexical_search.search(SearchQuery("x", mode="fuzzy")),  # type: ignore[arg-type]
    "search text missing": lambda p, b: p.lexical_search.search(SearchQuery(None)),  # type: ignore[arg-type]
}


# (domain, code) of the DataValidationError each case raises: the same on every backend, because the core
# checks the arguments before any adapter sees them (lcm_framework/storage/checked.py).
EXPECTED: dict[str, tuple[str, str]] = {
    "after_seq negative": ("conversations", "integer_out_of_range"),
    "after_seq too big": ("conversations", "integer_out_of_range"),
    "bad role": ("conversations", "invalid_enum"),
    "check fence NUL": ("coordination", "nul_character"),
    "content NUL": ("conversations", "nul_character"),
    "context ids negative": ("context", "integer_out_of_range"),
    "conversation id negative": ("conversations", "integer_out_of_range"),
    "delete ids negative": ("conversations", "integer_out_of_range"),
    "feedback NUL": ("recall", "nul_character"),
    "file name NUL": ("large_files", "nul_character"),
    "file size negative": ("large_files", "integer_out_of_range"),
    "file summary NUL": ("large_files", "nul_character"),
    "find NUL": ("conversations", "nul_character"),
    "find content NUL": ("conversations", "nul_character"),
    "get summary NUL": ("summaries", "nul_character"),
    "get_messages too big": ("conversations", "integer_out_of_range"),
    "get_or_create NUL": ("conversations", "nul_character"),
    "ingest count negative": ("coordination", "integer_out_of_range"),
    "ingest session NUL": ("coordination", "nul_character"),
    "insert without seq": ("conversations", "missing_seq"),
    "lease holder NUL": ("coordination", "nul_character"),
    "lease name NUL": ("coordination", "nul_character"),
    "lease ttl negative": ("coordination", "invalid_ttl"),
    "limit float": ("conversations", "invalid_type"),
    "list depth negative": ("summaries", "integer_out_of_range"),
    "memory confidence out of range": ("promoted_memory", "invalid_confidence"),
    "memory content NUL": ("promoted_memory", "nul_character"),
    "memory id negative": ("promoted_memory", "integer_out_of_range"),
    "memory list tag NUL": ("promoted_memory", "nul_character"),
    "memory metadata NUL": ("promoted_memory", "nul_character"),
    "memory tag NUL": ("promoted_memory", "nul_character"),
    "native checkpoint offset negative": ("native_transcripts", "integer_out_of_range"),
    "native checkpoint state NUL": ("native_transcripts", "nul_character"),
    "native ordinal too big": ("native_transcripts", "integer_out_of_range"),
    "native payload NUL": ("native_transcripts", "nul_character"),
    "native session NUL": ("native_transcripts", "nul_character"),
    "native source key NUL": ("native_transcripts", "nul_character"),
    "part metadata NUL": ("conversations", "nul_character"),
    "part raw_json NUL": ("conversations", "nul_character"),
    "part text NUL": ("conversations", "nul_character"),
    "recall query NUL": ("recall", "nul_character"),
    "recall target NUL": ("recall", "nul_character"),
    "redaction category NUL": ("redaction_admin", "nul_character"),
    "redaction count negative": ("redaction_admin", "integer_out_of_range"),
    "redaction count too big": ("redaction_admin", "integer_out_of_range"),
    "replace ordinal too big": ("context", "integer_out_of_range"),
    "replace summary NUL": ("context", "nul_character"),
    "search NUL": ("lexical_search", "nul_character"),
    "search conversation negative": ("lexical_search", "integer_out_of_range"),
    "search substring NUL": ("lexical_search", "nul_character"),
    "seq negative": ("conversations", "integer_out_of_range"),
    "seq too big": ("conversations", "integer_out_of_range"),
    "session NUL": ("conversations", "nul_character"),
    "summary content NUL": ("summaries", "nul_character"),
    "summary descendants negative": ("summaries", "integer_out_of_range"),
    "summary file id NUL": ("summaries", "nul_character"),
    "summary id NUL": ("summaries", "nul_character"),
    "summary source negative": ("summaries", "integer_out_of_range"),
    "summary tokens too big": ("summaries", "integer_out_of_range"),
    "title NUL": ("conversations", "nul_character"),
    "token_count bool": ("conversations", "invalid_type"),
    "token_count float": ("conversations", "invalid_type"),
    "token_count negative": ("conversations", "integer_out_of_range"),
    "token_count too big": ("conversations", "integer_out_of_range"),
    "lease name empty": ("coordination", "empty_id"),
    "lease ttl too long": ("coordination", "invalid_ttl"),
    "renew fence negative": ("coordination", "integer_out_of_range"),
    "set confidence out of range": ("promoted_memory", "invalid_confidence"),
    "stale max_confidence NaN": ("promoted_memory", "invalid_confidence"),
    "search unknown mode": ("lexical_search", "invalid_enum"),
    "search text missing": ("lexical_search", "invalid_type"),
}


def snapshot(p: ProjectStorage, b: Base) -> tuple[object, ...]:
    return (
        p.stats(),
        p.conversations.list_conversations(),
        p.conversations.list_messages(b.cid),
        p.conversations.list_parts([b.mid]),
        p.summaries.list_summaries(b.cid),
        p.context.list_items(b.cid),
        p.large_files.list_files(b.cid),
        p.promoted_memory.list_memories(include_archived=True),
        p.recall.stats("ok"),
        p.redaction_admin.get_counts(),
        p.coordination.get_session_ingest("s"),
        p.native_transcripts.list_by_source("a.jsonl"),
        p.native_transcripts.get_checkpoint("src"),
    )


def test_every_case_names_its_error() -> None:
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_refused_and_writes_nothing(project: ProjectStorage, case: str) -> None:
    conv = project.conversations.create_conversation("base")
    (stored,) = project.conversations.append_messages(conv.conversation_id, [message(content="base")])
    base = Base(conv.conversation_id, stored.message_id)
    before = snapshot(project, base)
    with pytest.raises(DataValidationError) as info:
        CASES[case](project, base)
    assert info.value.backend == project.capabilities.backend
    assert (info.value.domain, info.value.code) == EXPECTED[case]
    assert info.value.project == project.project_id
    assert "\x00" not in str(info.value)
    assert snapshot(project, base) == before


def test_max_safe_integer_is_accepted(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    (stored,) = project.conversations.insert_messages(conv.conversation_id,
                                                      [message(seq=BIG - 1, token_count=BIG - 1)])
    assert (stored.seq, stored.token_count) == (BIG - 1, BIG - 1)
    assert project.conversations.list_messages(conv.conversation_id, after_seq=BIG - 2) == [stored]
