"""Opening, closing, capabilities, health, stats and sanitized errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from lcm_framework.errors import ConflictError, StorageClosedError, StorageError
from lcm_framework.storage.contracts import (
    Capabilities,
    CoordinationScope,
    FullTextTier,
    ProjectStorage,
    Repositories,
    StorageBackendFactory,
)
from lcm_framework.storage.models import LargeFile, NewMessage, NewSummary, Role, SummaryKind

from .conftest import make_ref

REPOSITORIES = ("conversations", "summaries", "context", "large_files", "promoted_memory", "recall",
                "lexical_search", "redaction_admin", "coordination", "native_transcripts")
LEAKS = ("SELECT", "INSERT", "UPDATE ", "DELETE FROM", "sqlite3", "psycopg", "Traceback", "postgresql://")


def assert_sanitized(exc: BaseException, tmp_path: Path, project_id: str | None = None) -> None:
    text = str(exc)
    assert str(tmp_path) not in text
    assert "lcm.db" not in text
    for leak in LEAKS:
        assert leak not in text, (leak, text)
    if isinstance(exc, StorageError):
        assert exc.backend and exc.domain
        if project_id is not None:
            assert exc.project == project_id


def test_project_exposes_every_repository(project: ProjectStorage) -> None:
    assert isinstance(project, Repositories)
    for name in REPOSITORIES:
        assert getattr(project, name) is not None
    assert project.project_id == make_ref("alpha").project_id


def test_capabilities_are_data(factory: StorageBackendFactory, project: ProjectStorage) -> None:
    caps = factory.capabilities
    assert isinstance(caps, Capabilities)
    assert caps.backend == factory.name
    assert caps.transactions is True and caps.lexical_search is True
    assert isinstance(caps.full_text_tier, FullTextTier)
    assert caps.full_text_search == (caps.full_text_tier is not FullTextTier.LIKE)
    assert isinstance(caps.coordination, CoordinationScope)
    assert project.capabilities == caps


def test_close_is_idempotent_and_use_after_close_fails(project: ProjectStorage, tmp_path: Path) -> None:
    project.conversations.create_conversation("s")
    project.close()
    project.close()
    with pytest.raises(StorageClosedError) as info:
        project.conversations.list_conversations()
    assert_sanitized(info.value, tmp_path, project.project_id)
    with pytest.raises(StorageClosedError):
        project.transaction(lambda tx: tx.conversations.create_conversation("x"))
    health = project.health()
    assert health.ok is False and health.state == "closed" and health.backend


def test_closing_one_project_leaves_others_working(factory: StorageBackendFactory) -> None:
    first = factory.open_project(make_ref("one"))
    second = factory.open_project(make_ref("two"))
    again = factory.open_project(make_ref("one"))
    try:
        first.conversations.create_conversation("kept")
        first.close()
        assert [c.session_id for c in again.conversations.list_conversations()] == ["kept"]
        second.conversations.create_conversation("still fine")
        assert second.health().ok
    finally:
        second.close()
        again.close()


def test_data_survives_reopen(factory: StorageBackendFactory) -> None:
    ref = make_ref("reopen")
    storage = factory.open_project(ref)
    conv = storage.conversations.create_conversation("s")
    storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "persisted", 1)])
    storage.close()
    storage = factory.open_project(ref)
    try:
        assert [m.content for m in storage.conversations.list_messages(conv.conversation_id)] == ["persisted"]
    finally:
        storage.close()


def test_factory_close_closes_projects_and_is_idempotent(factory: StorageBackendFactory) -> None:
    storage = factory.open_project(make_ref("fc"))
    factory.close()
    factory.close()
    with pytest.raises(StorageClosedError):
        storage.conversations.list_conversations()
    with pytest.raises(StorageClosedError):
        factory.open_project(make_ref("late"))
    assert factory.health().ok is False


def test_list_projects_returns_opened_refs(factory: StorageBackendFactory) -> None:
    refs = [make_ref("lp-a"), make_ref("lp-b")]
    for ref in refs:
        factory.open_project(ref).close()
    listed = factory.list_projects()
    for ref in refs:
        assert ref in listed


def test_integrity_check_reports_each_project_ok(factory: StorageBackendFactory) -> None:
    refs = [make_ref("ic-a"), make_ref("ic-b")]
    for ref in refs:
        storage = factory.open_project(ref)
        conv = storage.conversations.create_conversation("s")
        storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "hello", 1)])
        storage.close()
    checked = {h.project: h for h in factory.check_integrity()}
    for ref in refs:
        assert checked[ref.project_id].ok and checked[ref.project_id].state == "ok"
        assert checked[ref.project_id].domain == "integrity" and checked[ref.project_id].backend == factory.name
    factory.close()
    with pytest.raises(StorageClosedError):
        factory.check_integrity()


def test_health_names_backend_and_project(factory: StorageBackendFactory, project: ProjectStorage,
                                          tmp_path: Path) -> None:
    health = project.health()
    assert health.ok and health.backend == factory.name and health.project == project.project_id
    assert str(tmp_path) not in repr(health)
    assert factory.health().ok and str(tmp_path) not in repr(factory.health())


def test_errors_are_sanitized(project: ProjectStorage, tmp_path: Path) -> None:
    conv = project.conversations.create_conversation("s")
    secret = "value-that-must-not-leak-9f8e"
    project.summaries.create_summary(NewSummary("sum_s", conv.conversation_id, SummaryKind.LEAF, 0, secret, 1,
                                                None, None, 0))
    with pytest.raises(ConflictError) as dup:
        project.summaries.create_summary(NewSummary("sum_s", conv.conversation_id, SummaryKind.LEAF, 0, secret, 1,
                                                    None, None, 0))
    assert_sanitized(dup.value, tmp_path, project.project_id)
    assert secret not in str(dup.value)
    assert dup.value.domain == "summaries"
    with pytest.raises(StorageError) as missing:
        project.large_files.create_file(LargeFile("file_x", 10**9, None, secret, None, 1, 1, "abc", secret,
                                                  conv.created_at))
    assert_sanitized(missing.value, tmp_path, project.project_id)
    assert secret not in str(missing.value)


def test_stats_reports_counts(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    stored = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "a", 3),
                                                                           NewMessage(Role.USER, "b", 4)])
    project.context.append_messages(conv.conversation_id, [m.message_id for m in stored])
    project.summaries.create_summary(NewSummary("sum_st", conv.conversation_id, SummaryKind.LEAF, 0, "s", 2,
                                                None, None, 0, source_message_ids=[stored[0].message_id]))
    project.redaction_admin.add_counts({"github-pat": 1})
    stats = project.stats()
    assert (stats.conversations, stats.messages, stats.message_tokens, stats.context_tokens) == (1, 2, 7, 7)
    assert dict(stats.summaries_by_depth) == {0: 1}
    assert dict(stats.redactions) == {"github-pat": 1}
    assert stats.large_files == 0
    assert stats.storage_bytes is None or stats.storage_bytes > 0


def test_storage_usage_and_compaction_change_nothing_that_is_read(project: ProjectStorage) -> None:
    from datetime import UTC, datetime

    from lcm_framework.storage.models import Checkpoint, FormatIdentity, NativeRecordInput, NewPart, PartKind

    conv = project.conversations.create_conversation("usage")
    text = "a repeated sentence about the deploy pipeline and its retries. " * 40
    parts = (NewPart(PartKind.TEXT, text=text, raw_json='{"type":"text","text":"' + text + '"}'),)
    stored = project.conversations.append_messages(conv.conversation_id, [
        NewMessage(Role.USER, f"{i} {text}", 100, parts=parts) for i in range(30)])
    fmt = FormatIdentity("claude-code", "jsonl", "1")
    records = [NativeRecordInput(f"{i:064x}", fmt, "usage", "usage.jsonl", i, f'{{"n": {i}, "text": "{text}"}}',
                                 f"{i + 1:064x}", "scrub-1", datetime(2024, 1, 1, tzinfo=UTC),
                                 stored[i].message_id) for i in range(30)]
    project.native_transcripts.ingest_batch(records, source_key="usage", expected=None, new_checkpoint=Checkpoint(
        "usage", 0, 12345, "ab" * 32, "scrub-1", 29, 30, 0, 0, "{}"))
    before_parts = project.conversations.list_parts([m.message_id for m in stored])
    before_native = project.native_transcripts.list_by_native_session("usage")

    usage = project.storage_usage()
    assert usage.messages == 30 and usage.transcript_bytes == 12345
    assert usage.payload_bytes > usage.stored_payload_bytes > 0  # repeated text compresses on every backend
    assert usage.total_bytes > 0 and usage.objects and all(v > 0 for v in usage.objects.values())
    report = project.compact_storage()
    assert report.bytes_after > 0
    assert project.conversations.list_parts([m.message_id for m in stored]) == before_parts
    assert project.native_transcripts.list_by_native_session("usage") == before_native
