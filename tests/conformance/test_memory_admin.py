"""Large files, promoted memory, recall and redaction administration."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from lcm_framework.errors import ConflictError, DataValidationError, NotFoundError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import LargeFile, NewMemory, NewMessage, RecallStats, Role, Surfacing

NOW = datetime(2024, 3, 1, 8, 0, tzinfo=UTC)


def a_file(cid: int, file_id: str, when: datetime = NOW, message_id: int | None = None) -> LargeFile:
    return LargeFile(file_id, cid, message_id, "big.log", "text/plain", 123_456, 30_000, "ab" * 32,
                     "A log of a build.", when)


def test_large_file_round_trip_and_order(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    (msg,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.TOOL, "x", 1)])
    later = project.large_files.create_file(a_file(conv.conversation_id, "file_b", NOW + timedelta(1)))
    first = project.large_files.create_file(a_file(conv.conversation_id, "file_a", NOW, msg.message_id))
    assert project.large_files.get_file("file_a") == first
    assert first.message_id == msg.message_id and first.created_at == NOW
    assert project.large_files.list_files(conv.conversation_id) == [first, later]
    assert project.large_files.get_file("missing") is None
    with pytest.raises(ConflictError):
        project.large_files.create_file(a_file(conv.conversation_id, "file_a"))


def test_memory_round_trip_tags_and_archive(project: ProjectStorage) -> None:
    repo = project.promoted_memory
    one = repo.create_memory(NewMemory("Use uv, not pip", tags=("tooling", "python", "tooling-2"), confidence=0.7,
                                       source_summary_id="sum_1", metadata='{"k": 1}'))
    two = repo.create_memory(NewMemory("Tests run with -n 2", tags=("python",)))
    assert one.tags == ("tooling", "python", "tooling-2") and one.confidence == 0.7 and not one.archived
    assert one.metadata == '{"k": 1}' and one.source_summary_id == "sum_1"
    assert repo.get_memory(one.memory_id) == one
    assert repo.list_memories() == [one, two]
    assert repo.list_memories(tag="python") == [one, two]
    assert repo.list_memories(tag="tooling") == [one]
    assert repo.list_memories(tag="tool") == []
    archived = repo.archive(one.memory_id)
    assert archived.archived and archived.updated_at >= one.updated_at
    assert repo.list_memories() == [two]
    assert [m.memory_id for m in repo.list_memories(include_archived=True)] == [one.memory_id, two.memory_id]
    assert not repo.revive(one.memory_id).archived
    lowered = repo.set_confidence(two.memory_id, 0.1)
    assert lowered.confidence == 0.1 and lowered.metadata == two.metadata  # metadata kept unless given
    cited = repo.set_confidence(two.memory_id, 0.3, metadata='{"summaries": ["sum_1", "sum_2"]}')
    assert cited.confidence == 0.3 and repo.get_memory(two.memory_id) == cited
    assert cited.metadata == '{"summaries": ["sum_1", "sum_2"]}' and cited.content == two.content
    assert repo.get_memory(one.memory_id).metadata == '{"k": 1}'  # only that memory
    assert repo.get_memory(10**9) is None


def test_memory_updates_of_missing_rows_are_not_found(project: ProjectStorage) -> None:
    for op in (lambda r: r.archive(10**9), lambda r: r.revive(10**9), lambda r: r.set_confidence(10**9, 0.5)):
        with pytest.raises(NotFoundError):
            op(project.promoted_memory)


def test_stale_candidates(project: ProjectStorage) -> None:
    repo = project.promoted_memory
    weak = repo.create_memory(NewMemory("weak", confidence=0.2))
    repo.create_memory(NewMemory("strong", confidence=0.9))
    gone = repo.archive(repo.create_memory(NewMemory("archived", confidence=0.1)).memory_id)
    future = datetime.now(UTC) + timedelta(days=1)
    assert repo.stale_candidates(older_than=future, max_confidence=0.5) == [weak]
    assert repo.stale_candidates(older_than=datetime(2000, 1, 1, tzinfo=UTC), max_confidence=1.0) == []
    assert gone.memory_id not in [m.memory_id for m in repo.stale_candidates(older_than=future,
                                                                             max_confidence=1.0)]


def test_recall_surfacing_and_feedback(project: ProjectStorage) -> None:
    repo = project.recall
    empty = repo.stats("sum_1")
    assert (empty.surfaced, empty.useful, empty.not_useful, empty.last_surfaced_at) == (0, 0, 0, None)
    repo.record_surfacing(["sum_1", "sum_2"], query="how to build")
    repo.record_surfacing(["sum_1"])
    repo.record_feedback("sum_1", useful=True)
    repo.record_feedback("sum_1", useful=False)
    repo.record_feedback("sum_1", useful=True)
    stats = repo.stats("sum_1")
    assert (stats.surfaced, stats.useful, stats.not_useful) == (2, 2, 1)
    assert stats.last_surfaced_at is not None and stats.last_surfaced_at.tzinfo is not None
    assert repo.stats("sum_2").surfaced == 1


def test_redaction_counts_add_and_purge(project: ProjectStorage) -> None:
    admin = project.redaction_admin
    admin.add_counts({"aws-key": 2, "github-pat": 1})
    admin.add_counts({"aws-key": 3})
    admin.add_counts({})
    assert admin.get_counts() == {"aws-key": 5, "github-pat": 1}
    conv = project.conversations.create_conversation("kept")
    project.promoted_memory.create_memory(NewMemory("m"))
    project.recall.record_surfacing(["t"])
    admin.purge()
    assert admin.get_counts() == {}
    assert project.promoted_memory.list_memories(include_archived=True) == []
    assert project.recall.stats("t").surfaced == 0
    assert project.conversations.get_conversation(conv.conversation_id) == conv


def test_memory_and_counters_are_project_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    project.promoted_memory.create_memory(NewMemory("alpha only"))
    project.redaction_admin.add_counts({"k": 1})
    project.recall.record_surfacing(["t"])
    assert other_project.promoted_memory.list_memories(include_archived=True) == []
    assert other_project.redaction_admin.get_counts() == {}
    assert other_project.recall.stats("t").surfaced == 0
    other_project.redaction_admin.purge()
    assert project.redaction_admin.get_counts() == {"k": 1}


def test_restore_memory_keeps_flags_and_times(project: ProjectStorage) -> None:
    repo = project.promoted_memory
    original = repo.archive(repo.create_memory(NewMemory("kept as is", tags=("b", "a"), confidence=0.3,
                                                         metadata='{"x": 2}')).memory_id)
    exported = replace(original, created_at=NOW, updated_at=NOW + timedelta(hours=1))
    restored = repo.restore_memory(exported)
    assert restored.memory_id != original.memory_id
    assert replace(restored, memory_id=exported.memory_id) == exported
    assert repo.get_memory(restored.memory_id) == restored


def test_delete_memory(project: ProjectStorage) -> None:
    repo = project.promoted_memory
    gone, kept = repo.create_memory(NewMemory("gone")), repo.create_memory(NewMemory("kept"))
    repo.delete_memory(gone.memory_id)
    assert repo.get_memory(gone.memory_id) is None
    assert repo.list_memories(include_archived=True) == [kept]
    with pytest.raises(NotFoundError):
        repo.delete_memory(gone.memory_id)


def test_recall_surfacings_restore_and_forget(project: ProjectStorage) -> None:
    repo = project.recall
    repo.record_surfacing(["mem_1", "mem_2"], query="first")
    repo.record_surfacing(["mem_1"])
    first, second = repo.surfacings("mem_1")
    assert (first.target_id, first.query, second.query) == ("mem_1", "first", None)
    assert first.surfaced_at <= second.surfaced_at and first.surfaced_at.tzinfo is not None
    assert [s.query for s in repo.surfacings("mem_2")] == ["first"]
    assert repo.surfacings("never") == []
    history = [Surfacing("mem_3", "old", NOW), Surfacing("mem_3", None, NOW + timedelta(minutes=1))]
    stats = RecallStats("mem_3", 2, 1, 0, NOW + timedelta(minutes=1))
    repo.record_surfacing(["mem_3"], query="replaced")
    repo.restore_history(stats, history)
    assert repo.stats("mem_3") == stats and repo.surfacings("mem_3") == history
    repo.forget(["mem_1", "mem_3"])
    assert repo.stats("mem_1") == RecallStats("mem_1", 0, 0, 0, None)
    assert repo.surfacings("mem_1") == [] and repo.surfacings("mem_3") == []
    assert repo.stats("mem_2").surfaced == 1


def test_restore_history_refuses_another_target(project: ProjectStorage) -> None:
    with pytest.raises(DataValidationError):
        project.recall.restore_history(RecallStats("a", 1, 0, 0, NOW), [Surfacing("b", None, NOW)])


def test_purge_clears_surfacings(project: ProjectStorage) -> None:
    project.recall.record_surfacing(["t"], query="q")
    project.redaction_admin.purge()
    assert project.recall.surfacings("t") == []
