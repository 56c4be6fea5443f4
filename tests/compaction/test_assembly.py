"""Context assembly: XML summaries, the finest DAG level the budget allows, protected tail, tool pairing."""

from __future__ import annotations

from pathlib import Path

from lcm_framework.assembly import assemble, assemble_context
from lcm_framework.compaction import CompactionEngine, Mode
from lcm_framework.storage.models import NewPart, PartKind, SummaryKind

from .helpers import ingest, new_message, project_dir, scripted_app, texts


def _compacted(tmp_path: Path):  # type: ignore[no-untyped-def]
    app, _ = scripted_app(project_dir(tmp_path), {})
    storage_cm = app.project()
    storage = storage_cm.__enter__()
    cid, stored = ingest(storage, "s1", texts(60))
    CompactionEngine(app).compact(storage, cid, Mode.FULL)
    return app, storage_cm, storage, cid, stored


def test_summaries_render_as_xml_user_messages_then_the_fresh_tail(tmp_path: Path) -> None:
    app, cm, storage, cid, stored = _compacted(tmp_path)
    try:
        coarsest = storage.context.token_total(cid)  # no room for detail: the context list as compacted
        context = assemble_context(app, storage, cid, budget_tokens=coarsest)
        first = context.messages[0]
        assert first["role"] == "user"
        xml = first["content"][0]["text"]
        assert xml.startswith('<summary id="sum_') and 'kind="condensed"' in xml and "<parents>" in xml
        assert '<summary_ref id="sum_' in xml and "<content>" in xml and xml.endswith("</summary>")
        assert 'earliest_at="2026-02-17T07:' in xml
        tail_texts = [m["content"][0]["text"] for m in context.messages[-4:]]
        assert tail_texts == [m.content for m in stored[-4:]]
        assert all(isinstance(m["content"], list) for m in context.messages)
        assert context.dropped_items == 0
        text = context.as_text()
        assert "[user]\n<summary id=" in text and stored[-1].content in text
    finally:
        cm.__exit__(None, None, None)


def test_budget_keeps_newest_items_and_always_the_tail(tmp_path: Path) -> None:
    _app, cm, storage, cid, stored = _compacted(tmp_path)
    try:
        items = storage.context.list_items(cid)
        tail_tokens = sum(i.token_count for i in items[-4:])
        tight = assemble(storage, cid, budget=tail_tokens + items[-5].token_count, fresh_tail_count=4)
        assert tight.included_items == 5 and tight.dropped_items == len(items) - 5
        assert tight.summary_ids == [items[-5].summary_id]
        tiny = assemble(storage, cid, budget=1, fresh_tail_count=4)
        assert tiny.message_ids == [m.message_id for m in stored[-4:]] and tiny.over_budget
    finally:
        cm.__exit__(None, None, None)


def test_a_budget_that_holds_the_whole_session_shows_every_message_raw_in_order(tmp_path: Path) -> None:
    _app, cm, storage, cid, stored = _compacted(tmp_path)
    try:
        assert storage.summaries.list_summaries(cid)  # compacted, yet nothing needs a summary here
        context = assemble(storage, cid, budget=sum(m.token_count for m in stored), fresh_tail_count=4)
        assert context.summary_ids == [] and context.message_ids == [m.message_id for m in stored]
        assert [t["content"][0]["text"] for t in context.messages] == [m.content for m in stored]
    finally:
        cm.__exit__(None, None, None)


def test_larger_budgets_show_more_raw_detail_newest_first_and_stay_chronological(tmp_path: Path) -> None:
    _app, cm, storage, cid, stored = _compacted(tmp_path)
    try:
        coarsest = storage.context.token_total(cid)
        full = sum(m.token_count for m in stored)
        order = {m.message_id: n for n, m in enumerate(stored)}
        raw_counts = []
        for budget in range(coarsest, full + 1, max(1, (full - coarsest) // 12)):
            context = assemble(storage, cid, budget=budget, fresh_tail_count=4)
            assert context.token_estimate <= budget
            raw = [order[m] for m in context.message_ids]
            assert raw == sorted(raw) and raw == list(range(raw[0], len(stored)))  # a newest, contiguous run
            covered = set()
            for summary in storage.summaries.get_summaries(context.summary_ids):
                for leaf in _leaves(storage, summary.summary_id):
                    covered.update(order[m] for m in storage.summaries.source_message_ids(leaf))
            assert set(range(raw[0])) <= covered  # everything older is shown as a summary
            raw_counts.append(len(raw))
        assert raw_counts == sorted(raw_counts) and raw_counts[-1] > raw_counts[0]
    finally:
        cm.__exit__(None, None, None)


def _leaves(storage, summary_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    summary = storage.summaries.get_summary(summary_id)
    if summary.kind is SummaryKind.LEAF:
        return [summary_id]
    return [leaf for parent in storage.summaries.parent_ids(summary_id) for leaf in _leaves(storage, parent)]


def test_tool_pairs_are_sanitized_and_results_travel_in_user_turns(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    call = NewPart(PartKind.TOOL_CALL, text='{"command": "ls"}', tool_call_id="toolu_a", tool_name="Bash")
    result = NewPart(PartKind.TOOL_RESULT, text="README.md", tool_call_id="toolu_a")
    orphan = NewPart(PartKind.TOOL_RESULT, text="lost", tool_call_id="toolu_gone")
    unanswered = NewPart(PartKind.TOOL_CALL, text="{}", tool_call_id="toolu_b", tool_name="Read")
    thinking = NewPart(PartKind.REASONING, text="hmm")
    messages = [
        new_message(0, "list files"),
        new_message(1, "ok", parts=[thinking, NewPart(PartKind.TEXT, text="Listing."), call]),
        new_message(2, "result", parts=[result, orphan]),
        new_message(3, "again", parts=[unanswered]),
    ]
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", messages)
        turns = assemble(storage, cid, budget=10_000, fresh_tail_count=8).messages
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "list files"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "ls"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "README.md"},
            {"type": "text", "text": "[tool result of toolu_gone]\nlost"},
        ]},
    ]


def test_assembly_of_an_unknown_conversation_is_empty(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    with app.project() as storage:
        context = assemble(storage, 999, budget=100, fresh_tail_count=8)
    assert context.messages == [] and context.token_estimate == 0


def test_restore_after_an_agent_compaction_shows_what_the_assembler_selects(tmp_path: Path) -> None:
    from lcm_framework.assembly import select_pieces
    from lcm_framework.assembly.restore import restore

    _app, cm, storage, cid, stored = _compacted(tmp_path)
    try:
        budget = storage.context.token_total(cid) * 2  # more than the compacted list: older detail comes back
        restored = restore(storage, "s1", max_tokens=budget, limit=12, source="compact")
        chosen = select_pieces(storage, cid, budget=budget, fresh_tail_count=0)
        assert [s["summary_id"] for s in restored["summaries"]] == [p.summary_id for p in chosen.pieces
                                                                   if p.summary_id]
        assert restored["messages"] == [p.message_id for p in chosen.pieces if p.message_id is not None]
        raw_in_list = [i.message_id for i in storage.context.list_items(cid) if i.message_id is not None]
        assert len(restored["messages"]) > len(raw_in_list) and restored["tokens"] <= budget
        assert stored[-1].content in restored["context"]
    finally:
        cm.__exit__(None, None, None)
