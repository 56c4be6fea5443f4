"""Native transcript records: immutability, ingest-key idempotency, checkpoint compare-and-swap."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from lcm_framework.errors import ConflictError, NotFoundError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import Checkpoint, FormatIdentity, NativeRecordInput, NewMessage, Role

FMT = FormatIdentity("claude-code", "jsonl", "1")
NOW = datetime(2024, 4, 1, tzinfo=UTC)


def rec(n: int, *, session: str = "native-1", locator: str = "proj/a.jsonl", payload: str | None = None,
        message_id: int | None = None) -> NativeRecordInput:
    return NativeRecordInput(f"key-{locator}-{n}", FMT, session, locator, n, payload or f'{{"n": {n}}}',
                             f"{n:064x}", "scrub-1", NOW, message_id)


def cp(offset: int, last: int, imported: int, *, revision: int = 0, skipped: int = 0) -> Checkpoint:
    return Checkpoint("src", revision, offset, "ab" * 32, "scrub-1", last, imported, skipped, 0, '{"v": 2}')


def ingest(project: ProjectStorage, records: list[NativeRecordInput], expected: Checkpoint | None,
           target: Checkpoint):  # type: ignore[no-untyped-def]
    return project.native_transcripts.ingest_batch(records, source_key="src", expected=expected,
                                                   new_checkpoint=target)


def test_ingest_and_read_back(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    (msg,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "hi", 1)])
    result = ingest(project, [rec(0, message_id=msg.message_id), rec(1)], None, cp(100, 1, 2))
    assert (result.inserted, result.skipped) == (2, 0)
    assert result.checkpoint is not None and result.checkpoint.revision >= 1
    assert replace(result.checkpoint, revision=0) == cp(100, 1, 2)
    repo = project.native_transcripts
    assert repo.get_checkpoint("src") == result.checkpoint
    by_session = repo.list_by_native_session("native-1")
    assert [r.source_ordinal for r in by_session] == [0, 1]
    first = by_session[0]
    assert first.format == FMT and first.payload_json == '{"n": 0}' and first.message_id == msg.message_id
    assert first.observed_at == NOW and first.ingested_at.tzinfo is not None
    assert repo.get_by_id(first.transcript_id) == first
    assert repo.get_by_id(10**9) is None
    assert repo.list_by_source("proj/a.jsonl") == by_session
    assert repo.list_by_message(msg.message_id) == [first]
    assert repo.get_checkpoint("other") is None


def test_revision_grows_on_each_advance(project: ProjectStorage) -> None:
    first = ingest(project, [rec(0)], None, cp(10, 0, 1)).checkpoint
    assert first is not None
    second = ingest(project, [rec(1)], first, cp(20, 1, 2)).checkpoint
    assert second is not None and second.revision == first.revision + 1
    third = ingest(project, [], second, cp(25, 1, 2, skipped=1)).checkpoint
    assert third is not None and third.revision == second.revision + 1


def test_stale_expected_checkpoint_conflicts_and_writes_nothing(project: ProjectStorage) -> None:
    first = ingest(project, [rec(0)], None, cp(10, 0, 1)).checkpoint
    assert first is not None
    with pytest.raises(ConflictError):
        ingest(project, [rec(1)], None, cp(20, 1, 2))
    with pytest.raises(ConflictError):
        ingest(project, [rec(1)], replace(first, byte_offset=5), cp(20, 1, 2))
    assert project.native_transcripts.get_checkpoint("src") == first
    assert [r.source_ordinal for r in project.native_transcripts.list_by_source("proj/a.jsonl")] == [0]


def test_revision_prevents_aba(project: ProjectStorage) -> None:
    a = ingest(project, [], None, cp(10, 0, 1)).checkpoint
    assert a is not None
    b = ingest(project, [], a, cp(20, 0, 1)).checkpoint
    assert b is not None
    a_again = ingest(project, [], b, cp(10, 0, 1)).checkpoint
    assert a_again is not None and replace(a_again, revision=0) == replace(a, revision=0)
    assert a_again.revision > a.revision
    with pytest.raises(ConflictError):
        ingest(project, [rec(5)], a, cp(30, 5, 2))
    assert project.native_transcripts.get_checkpoint("src") == a_again
    assert project.native_transcripts.list_by_source("proj/a.jsonl") == []


def test_identical_retry_after_commit_is_read_only(project: ProjectStorage) -> None:
    records = [rec(0), rec(1)]
    done = ingest(project, records, None, cp(100, 1, 2))
    assert done.checkpoint is not None
    retry = ingest(project, records, None, cp(100, 1, 2))
    assert (retry.inserted, retry.skipped) == (0, 2)
    assert retry.checkpoint == done.checkpoint
    assert project.native_transcripts.get_checkpoint("src") == done.checkpoint
    assert len(project.native_transcripts.list_by_source("proj/a.jsonl")) == 2


def test_retry_with_new_observation_time_and_scrubber_is_skipped(project: ProjectStorage) -> None:
    first = ingest(project, [rec(0)], None, cp(10, 0, 1)).checkpoint
    retried = replace(rec(0), observed_at=NOW + timedelta(hours=1), scrubber_version="scrub-2")
    result = ingest(project, [retried, rec(1)], first, cp(20, 1, 2))
    assert (result.inserted, result.skipped) == (1, 1)
    (stored, _) = project.native_transcripts.list_by_source("proj/a.jsonl")
    assert stored.observed_at == NOW and stored.scrubber_version == "scrub-1"


@pytest.mark.parametrize("change", ["payload", "ordinal", "link", "unlink", "session"])
def test_reused_ingest_key_with_different_data_conflicts_whole_batch(project: ProjectStorage, change: str) -> None:
    conv = project.conversations.create_conversation("s")
    msg, other = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "hi", 1),
                                                                             NewMessage(Role.USER, "yo", 1)])
    first = ingest(project, [rec(0, message_id=msg.message_id)], None, cp(10, 0, 1)).checkpoint
    changed = {
        "payload": replace(rec(0, message_id=msg.message_id), payload_json='{"n": "changed"}'),
        "ordinal": replace(rec(0, message_id=msg.message_id), source_ordinal=7),
        "link": rec(0, message_id=other.message_id),
        "unlink": rec(0),
        "session": replace(rec(0, message_id=msg.message_id), native_session_id="another"),
    }[change]
    with pytest.raises(ConflictError):
        ingest(project, [rec(1), changed], first, cp(20, 1, 2))
    assert project.native_transcripts.get_checkpoint("src") == first
    assert [r.source_ordinal for r in project.native_transcripts.list_by_source("proj/a.jsonl")] == [0]


def test_a_record_stored_without_a_link_is_skipped_and_stays_unchanged(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    (msg,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "hi", 1)])
    first = ingest(project, [rec(0), rec(1)], None, cp(10, 1, 2)).checkpoint
    before = project.native_transcripts.list_by_source("proj/a.jsonl")
    result = ingest(project, [rec(0, message_id=msg.message_id), rec(1), rec(2)], first, cp(20, 2, 3))
    assert (result.inserted, result.skipped) == (1, 2)
    assert project.native_transcripts.list_by_source("proj/a.jsonl")[:2] == before
    assert project.native_transcripts.list_by_message(msg.message_id) == []


def test_link_to_missing_message_rolls_back(project: ProjectStorage) -> None:
    with pytest.raises(NotFoundError):
        ingest(project, [rec(0), rec(1, message_id=10**9)], None, cp(10, 1, 2))
    assert project.native_transcripts.get_checkpoint("src") is None
    assert project.native_transcripts.list_by_source("proj/a.jsonl") == []


def test_native_records_are_project_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    ingest(project, [rec(0)], None, cp(10, 0, 1))
    assert other_project.native_transcripts.get_checkpoint("src") is None
    assert other_project.native_transcripts.list_by_native_session("native-1") == []
    result = other_project.native_transcripts.ingest_batch([rec(0)], source_key="src", expected=None,
                                                           new_checkpoint=cp(10, 0, 1))
    assert result.inserted == 1
