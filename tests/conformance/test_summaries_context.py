"""Summary DAG lineage and the ordered context list."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lcm_framework.errors import ConflictError, DataValidationError, NotFoundError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import ContextItemKind, NewMessage, NewSummary, Role, SummaryKind


def setup_conversation(project: ProjectStorage, n: int = 4) -> tuple[int, list[int]]:
    conv = project.conversations.create_conversation("s")
    stored = project.conversations.append_messages(
        conv.conversation_id, [NewMessage(Role.USER, f"m{i}", 10 + i) for i in range(n)])
    return conv.conversation_id, [m.message_id for m in stored]


def leaf(sid: str, cid: int, sources: list[int], tokens: int = 5) -> NewSummary:
    return NewSummary(sid, cid, SummaryKind.LEAF, 0, f"leaf {sid}", tokens, datetime(2024, 1, 1, tzinfo=UTC),
                      datetime(2024, 1, 2, tzinfo=UTC), 0, source_message_ids=sources, file_ids=["file_a"])


def condensed(sid: str, cid: int, parents: list[str], depth: int = 1) -> NewSummary:
    return NewSummary(sid, cid, SummaryKind.CONDENSED, depth, f"condensed {sid}", 3, None, None, len(parents),
                      parent_ids=parents)


def test_summary_round_trip_and_lineage(project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project)
    repo = project.summaries
    first = repo.create_summary(leaf("sum_a", cid, [mids[1], mids[0]]))
    assert first.file_ids == ("file_a",) and first.kind is SummaryKind.LEAF
    assert first.earliest_at == datetime(2024, 1, 1, tzinfo=UTC)
    assert repo.get_summary("sum_a") == first
    repo.create_summary(leaf("sum_b", cid, [mids[2]]))
    top = repo.create_summary(condensed("sum_c", cid, ["sum_b", "sum_a"]))
    assert top.earliest_at is None and top.descendant_count == 2
    assert repo.source_message_ids("sum_a") == [mids[1], mids[0]]
    assert repo.parent_ids("sum_c") == ["sum_b", "sum_a"]
    assert repo.child_ids("sum_a") == ["sum_c"]
    assert repo.child_ids("sum_c") == []
    assert repo.summaries_for_messages([mids[0], mids[2], mids[3]]) == {mids[0]: ["sum_a"], mids[2]: ["sum_b"]}
    assert [s.summary_id for s in repo.list_summaries(cid)] == ["sum_a", "sum_b", "sum_c"]
    assert [s.summary_id for s in repo.list_summaries(cid, depth=1)] == ["sum_c"]
    assert repo.count_by_depth(cid) == {0: 2, 1: 1}
    assert repo.count_by_depth() == {0: 2, 1: 1}
    assert [s.summary_id for s in repo.get_summaries(["sum_c", "nope", "sum_a"])] == ["sum_c", "sum_a"]
    assert repo.get_summary("nope") is None


def test_duplicate_summary_id_conflicts(project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project)
    project.summaries.create_summary(leaf("sum_x", cid, [mids[0]]))
    with pytest.raises(ConflictError):
        project.summaries.create_summary(leaf("sum_x", cid, [mids[1]]))
    assert project.summaries.source_message_ids("sum_x") == [mids[0]]


def test_summary_references_must_exist(project: ProjectStorage) -> None:
    cid, _ = setup_conversation(project)
    with pytest.raises(NotFoundError):
        project.summaries.create_summary(leaf("sum_m", cid, [10**9]))
    with pytest.raises(NotFoundError):
        project.summaries.create_summary(condensed("sum_p", cid, ["missing"]))
    with pytest.raises(NotFoundError):
        project.summaries.create_summary(leaf("sum_c", 10**9, []))
    assert project.summaries.list_summaries(cid) == []


def test_summary_kind_rules(project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project)
    bad_leaf = NewSummary("sum_1", cid, SummaryKind.LEAF, 1, "x", 1, None, None, 0, source_message_ids=[mids[0]])
    bad_condensed = NewSummary("sum_2", cid, SummaryKind.CONDENSED, 0, "x", 1, None, None, 0)
    for bad in (bad_leaf, bad_condensed):
        with pytest.raises(DataValidationError):
            project.summaries.create_summary(bad)


def test_context_append_replace_and_totals(project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project, 5)
    ctx = project.context
    ctx.append_messages(cid, mids)
    assert [i.ordinal for i in ctx.list_items(cid)] == [0, 1, 2, 3, 4]
    assert ctx.token_total(cid) == sum(10 + i for i in range(5))
    assert ctx.depths(cid) == []
    project.summaries.create_summary(leaf("sum_r", cid, mids[1:4], tokens=7))
    ctx.replace_range(cid, 1, 3, "sum_r")
    items = ctx.list_items(cid)
    assert [(i.ordinal, i.kind) for i in items] == [
        (0, ContextItemKind.MESSAGE), (1, ContextItemKind.SUMMARY), (2, ContextItemKind.MESSAGE)]
    assert items[1].summary_id == "sum_r" and items[1].message_id is None and items[1].token_count == 7
    assert [items[0].message_id, items[2].message_id] == [mids[0], mids[4]]
    assert ctx.token_total(cid) == 10 + 7 + 14
    assert ctx.depths(cid) == [0]
    project.summaries.create_summary(condensed("sum_top", cid, ["sum_r"]))
    ctx.replace_range(cid, 1, 1, "sum_top")
    assert ctx.depths(cid) == [1]
    ctx.append_messages(cid, [])
    assert len(ctx.list_items(cid)) == 3


def test_replace_range_refuses_bad_ranges_and_writes_nothing(project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project, 3)
    ctx = project.context
    ctx.append_messages(cid, mids)
    project.summaries.create_summary(leaf("sum_q", cid, mids[:1]))
    before = ctx.list_items(cid)
    with pytest.raises(DataValidationError):
        ctx.replace_range(cid, 2, 1, "sum_q")
    with pytest.raises(NotFoundError):
        ctx.replace_range(cid, 1, 5, "sum_q")
    with pytest.raises(NotFoundError):
        ctx.replace_range(cid, 0, 0, "no_such_summary")
    assert ctx.list_items(cid) == before


def test_context_append_requires_messages_of_the_conversation(project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project, 2)
    other = project.conversations.create_conversation("other")
    with pytest.raises(NotFoundError):
        project.context.append_messages(other.conversation_id, [mids[0]])
    with pytest.raises(NotFoundError):
        project.context.append_messages(cid, [mids[0], 10**9])
    assert project.context.list_items(cid) == []
    assert project.context.list_items(other.conversation_id) == []


def test_summaries_and_context_are_project_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    cid, mids = setup_conversation(project)
    project.summaries.create_summary(leaf("sum_iso", cid, mids[:1]))
    project.context.append_messages(cid, mids)
    assert other_project.summaries.get_summary("sum_iso") is None
    assert other_project.summaries.count_by_depth() == {}
    assert other_project.context.list_items(cid) == []
