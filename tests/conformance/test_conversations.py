"""Conversations, messages and parts: round trips, ordering, pagination, deletion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lcm_framework.errors import ConflictError, NotFoundError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import (
    NewMessage,
    NewPart,
    NewSummary,
    PartKind,
    Role,
    SummaryKind,
)


def msgs(*contents: str, role: Role = Role.USER) -> list[NewMessage]:
    return [NewMessage(role=role, content=c, token_count=len(c) // 4 + 1) for c in contents]


def test_create_and_get_conversation(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("sess-1", title="First")
    assert conv.session_id == "sess-1" and conv.title == "First"
    assert conv.created_at.tzinfo is not None
    assert project.conversations.get_conversation(conv.conversation_id) == conv
    assert project.conversations.get_conversation(conv.conversation_id + 1000) is None


def test_get_or_create_returns_newest_segment(project: ProjectStorage) -> None:
    repo = project.conversations
    first = repo.get_or_create_conversation("sess")
    assert repo.get_or_create_conversation("sess") == first
    second = repo.create_conversation("sess")
    assert repo.get_or_create_conversation("sess") == second
    assert repo.find_conversations("sess") == [first, second]
    assert repo.find_conversations("other") == []


def test_list_conversations_order_and_limit(project: ProjectStorage) -> None:
    repo = project.conversations
    made = [repo.create_conversation(f"s{i}") for i in range(4)]
    assert repo.list_conversations() == made
    assert repo.list_conversations(limit=2) == made[:2]
    assert repo.list_conversations(limit=0) == []
    assert repo.list_conversations(limit=-1) == made


def test_append_allocates_contiguous_seq_from_zero(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    first = repo.append_messages(conv.conversation_id, msgs("a", "b"))
    second = repo.append_messages(conv.conversation_id, msgs("c"))
    assert [m.seq for m in first + second] == [0, 1, 2]
    assert [m.content for m in repo.list_messages(conv.conversation_id)] == ["a", "b", "c"]
    assert repo.message_count(conv.conversation_id) == 3
    assert repo.append_messages(conv.conversation_id, []) == []


def test_message_round_trip_keeps_fields(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    when = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)
    new = NewMessage(role=Role.ASSISTANT, content="héllo ✓ 🎉\nline", token_count=7, created_at=when)
    (stored,) = project.conversations.append_messages(conv.conversation_id, [new])
    assert (stored.role, stored.content, stored.token_count, stored.created_at) == (
        Role.ASSISTANT, "héllo ✓ 🎉\nline", 7, when)
    assert project.conversations.get_messages([stored.message_id]) == [stored]


def test_append_to_missing_conversation_is_not_found(project: ProjectStorage) -> None:
    with pytest.raises(NotFoundError):
        project.conversations.append_messages(987654, msgs("x"))


def test_insert_messages_with_explicit_seq(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    batch = [NewMessage(Role.USER, c, 1, seq=s) for c, s in (("five", 5), ("two", 2))]
    stored = repo.insert_messages(conv.conversation_id, batch)
    assert [m.seq for m in stored] == [5, 2]
    assert [m.content for m in repo.list_messages(conv.conversation_id)] == ["two", "five"]
    appended = repo.append_messages(conv.conversation_id, msgs("next"))
    assert appended[0].seq == 6


def test_insert_duplicate_seq_conflicts_and_writes_nothing(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    repo.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "a", 1, seq=1)])
    with pytest.raises(ConflictError):
        repo.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "b", 1, seq=2),
                                                    NewMessage(Role.USER, "c", 1, seq=1)])
    with pytest.raises(ConflictError):
        repo.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "d", 1, seq=3),
                                                    NewMessage(Role.USER, "e", 1, seq=3)])
    assert [m.content for m in repo.list_messages(conv.conversation_id)] == ["a"]


def test_pagination_rules(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    repo.append_messages(conv.conversation_id, msgs(*"abcdef"))
    cid = conv.conversation_id

    def contents(**kw: int | None) -> str:
        return "".join(m.content for m in repo.list_messages(cid, **kw))

    assert contents() == "abcdef"
    assert contents(after_seq=1) == "cdef"
    assert contents(after_seq=1, limit=2) == "cd"
    assert contents(limit=0) == ""
    assert contents(limit=None) == "abcdef"
    assert contents(limit=-5) == "abcdef"
    assert contents(after_seq=5) == ""
    assert contents(after_seq=0, limit=1) == "b"


def test_get_messages_in_asked_order_missing_omitted(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    a, _, c = repo.append_messages(conv.conversation_id, msgs("a", "b", "c"))
    got = repo.get_messages([c.message_id, 10**9, a.message_id])
    assert [m.content for m in got] == ["c", "a"]
    assert repo.get_messages([]) == []


def test_find_message_by_content(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    repo.append_messages(conv.conversation_id, msgs("same", "other", "same"))
    repo.append_messages(conv.conversation_id, msgs("same", role=Role.ASSISTANT))
    found = repo.find_message_by_content(conv.conversation_id, "user", "same")
    assert [m.seq for m in found] == [0, 2]
    assert repo.find_message_by_content(conv.conversation_id, "assistant", "same")[0].seq == 3
    assert repo.find_message_by_content(conv.conversation_id, "user", "Same") == []


def test_parts_round_trip_by_ordinal(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    parts = [
        NewPart(PartKind.TEXT, text="hello"),
        NewPart(PartKind.TOOL_CALL, tool_call_id="call_1", tool_name="bash", raw_json='{"a": 1}', metadata="m"),
        NewPart(PartKind.TOOL_RESULT, text="out", tool_call_id="call_1", is_error=True),
    ]
    with_parts, without = repo.append_messages(
        conv.conversation_id, [NewMessage(Role.ASSISTANT, "hello", 2, parts=parts), *msgs("plain")])
    got = repo.list_parts([with_parts.message_id, without.message_id])
    assert list(got) == [with_parts.message_id]
    stored = got[with_parts.message_id]
    assert [p.ordinal for p in stored] == [0, 1, 2]
    assert [p.kind for p in stored] == [PartKind.TEXT, PartKind.TOOL_CALL, PartKind.TOOL_RESULT]
    assert stored[1].tool_name == "bash" and stored[1].raw_json == '{"a": 1}' and stored[1].metadata == "m"
    assert stored[2].is_error is True and stored[0].is_error is False
    assert len({p.part_id for p in stored}) == 3
    assert all(p.message_id == with_parts.message_id for p in stored)


def test_delete_skips_summarized_and_cleans_context(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    cid = conv.conversation_id
    a, b, c = repo.append_messages(cid, [NewMessage(Role.USER, "a", 1, parts=[NewPart(PartKind.TEXT, text="a")]),
                                         *msgs("b", "c")])
    project.context.append_messages(cid, [a.message_id, b.message_id, c.message_id])
    project.summaries.create_summary(NewSummary("sum_del", cid, SummaryKind.LEAF, 0, "s", 1, None, None, 0,
                                                source_message_ids=[b.message_id]))
    result = repo.delete_messages([a.message_id, b.message_id, 10**9])
    assert result.deleted == (a.message_id,)
    assert result.skipped_summarized == (b.message_id,)
    assert [m.content for m in repo.list_messages(cid)] == ["b", "c"]
    assert repo.list_parts([a.message_id]) == {}
    items = project.context.list_items(cid)
    assert [i.message_id for i in items] == [b.message_id, c.message_id]
    assert [i.ordinal for i in items] == [0, 1]
    assert repo.delete_messages([]).deleted == ()


def test_projects_are_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("shared-session")
    project.conversations.append_messages(conv.conversation_id, msgs("secret alpha"))
    assert other_project.conversations.find_conversations("shared-session") == []
    assert other_project.conversations.list_conversations() == []
    other = other_project.conversations.create_conversation("shared-session")
    assert other_project.conversations.list_messages(other.conversation_id) == []
    assert project.conversations.find_conversations("shared-session") == [conv]


def test_created_at_ties_order_by_id(project: ProjectStorage) -> None:
    repo = project.conversations
    conv = repo.create_conversation("s")
    when = datetime(2020, 1, 1, tzinfo=UTC)
    stored = repo.append_messages(conv.conversation_id, [NewMessage(Role.USER, str(i), 1, created_at=when)
                                                          for i in range(3)])
    assert all(m.created_at == when for m in stored)
    assert [m.seq for m in repo.list_messages(conv.conversation_id)] == [0, 1, 2]
    assert stored[0].created_at + timedelta(0) == when


def test_concurrent_get_or_create_converges(project: ProjectStorage) -> None:
    import threading

    found: list[int] = []
    start = threading.Barrier(4)

    def run() -> None:
        start.wait()
        found.append(project.conversations.get_or_create_conversation("race").conversation_id)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(found) == 4 and len(set(found)) == 1
    assert len(project.conversations.find_conversations("race")) == 1
