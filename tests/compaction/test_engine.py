"""Leaf passes, condensation, modes and the lineage they persist (real SQLite, scripted or extractive summarizer)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lcm_framework.compaction import CompactionEngine, Mode
from lcm_framework.recall import verify
from lcm_framework.storage.models import ContextItemKind, SummaryKind

from .helpers import ingest, make_app, project_dir, scripted_app, texts

SUM_ID = re.compile(r"sum_[0-9a-f]{16}")


def test_full_sweep_builds_leaves_then_condensed_with_lineage(tmp_path: Path) -> None:
    app, summarizer = scripted_app(project_dir(tmp_path), {})
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", texts(40))
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert report.action_taken and report.created_by_depth[0] >= 4 and report.created_by_depth.get(1, 0) >= 1
        assert report.tokens_after < report.tokens_before
        items = storage.context.list_items(cid)
        tail = [i for i in items if i.kind is ContextItemKind.MESSAGE]
        assert [i.message_id for i in tail] == [m.message_id for m in stored[-4:]]  # fresh tail untouched
        leaves = storage.summaries.list_summaries(cid, depth=0)
        covered = [mid for leaf in leaves for mid in storage.summaries.source_message_ids(leaf.summary_id)]
        assert sorted(covered) == [m.message_id for m in stored[:-4]]
        for leaf in leaves:
            assert SUM_ID.fullmatch(leaf.summary_id) and leaf.kind is SummaryKind.LEAF
            sources = storage.conversations.get_messages(storage.summaries.source_message_ids(leaf.summary_id))
            assert leaf.earliest_at == min(m.created_at for m in sources)
            assert leaf.latest_at == max(m.created_at for m in sources)
            assert leaf.descendant_count == 0 and leaf.token_count == summarizer.count_tokens(leaf.content)
        for condensed in storage.summaries.list_summaries(cid, depth=1):
            parents = storage.summaries.get_summaries(storage.summaries.parent_ids(condensed.summary_id))
            assert len(parents) >= 3 and all(p.depth == 0 for p in parents)
            assert condensed.descendant_count == sum(1 + p.descendant_count for p in parents)
            assert condensed.earliest_at == min(p.earliest_at for p in parents if p.earliest_at)
        assert verify(storage).ok


def test_leaf_chunks_respect_the_token_cap_and_pass_previous_context(tmp_path: Path) -> None:
    app, summarizer = scripted_app(project_dir(tmp_path), {}, {"compaction.leaf_min_fanout": 50})
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", texts(30))
        per_message = stored[0].token_count
        CompactionEngine(app).compact(storage, cid, Mode.FULL)
        for leaf in storage.summaries.list_summaries(cid, depth=0):
            sources = storage.conversations.get_messages(storage.summaries.source_message_ids(leaf.summary_id))
            assert sum(m.token_count for m in sources) <= max(1000, per_message)
        leaf_requests = [r for r in summarizer.requests if r.depth == 0]
        assert "<previous_context>" not in leaf_requests[0].prompt
        assert "<previous_context>" in leaf_requests[1].prompt
        assert re.search(r"\[2026-02-17 07:0\d\] user: message 0 fact0", leaf_requests[0].segment)


def test_condensed_prompts_follow_depth(tmp_path: Path) -> None:
    app, summarizer = scripted_app(project_dir(tmp_path), {}, {"compaction.leaf_chunk_tokens": 150})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(60))
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert max(report.created_by_depth) >= 2
        depth2 = [r for r in summarizer.requests if r.depth == 2]
        assert depth2 and "depth 2" in depth2[0].prompt and "<summaries>" in depth2[0].prompt
        assert verify(storage).ok


def test_incremental_waits_for_a_full_chunk_and_never_condenses_at_depth_zero(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    engine = CompactionEngine(app)
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(8))
        report = engine.compact(storage, cid, Mode.INCREMENTAL)
        assert not report.action_taken
        ingest(storage, "s1", texts(40, start=8))
        report = engine.compact(storage, cid, Mode.INCREMENTAL)
        assert set(report.created_by_depth) == {0} and report.created_by_depth[0] >= 2  # every full chunk
        items = storage.context.list_items(cid)
        raw_outside_tail = sum(i.token_count for i in items[:-4] if i.message_id is not None)
        assert 0 < raw_outside_tail <= engine.settings.leaf_chunk_tokens  # a partial chunk waits
        for _ in range(10):
            engine.compact(storage, cid, Mode.INCREMENTAL)
        assert storage.summaries.count_by_depth(cid).get(1, 0) == 0  # incremental_max_depth = 0


def test_incremental_condenses_up_to_the_configured_depth(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {}, {"compaction.incremental_max_depth": 1})
    engine = CompactionEngine(app)
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(120))
        for _ in range(20):
            engine.compact(storage, cid, Mode.INCREMENTAL)
        depths = storage.summaries.count_by_depth(cid)
        assert depths.get(1, 0) >= 1 and depths.get(2, 0) == 0


def test_until_under_stops_once_under_budget(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        total = storage.context.token_total(cid)
        report = CompactionEngine(app).compact(storage, cid, Mode.UNTIL_UNDER, budget=total - 1)
        assert report.action_taken and report.tokens_after <= total - 1
        assert report.created_by_depth == {0: 1}  # one leaf was enough: the rest stays raw
        untouched = CompactionEngine(app).compact(storage, cid, Mode.UNTIL_UNDER, budget=10**9)
        assert not untouched.action_taken


def test_dry_run_plans_without_writing(tmp_path: Path) -> None:
    app, summarizer = scripted_app(project_dir(tmp_path), {})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        before = storage.context.list_items(cid)
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL, dry_run=True)
        assert report.action_taken and report.created_by_depth[0] >= 4
        assert storage.context.list_items(cid) == before and not summarizer.requests
        assert storage.summaries.count_by_depth(cid) == {}


def test_nothing_outside_the_fresh_tail_is_a_no_op(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(4, words=3000))
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert not report.action_taken and report.tokens_after == report.tokens_before


def test_extractive_summarizer_end_to_end_keeps_every_message_reachable(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path), {"compaction.leaf_chunk_tokens": 2000})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(200))
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert report.outcomes.get("normal", 0) >= 1
        assert report.tokens_after < report.tokens_before / 3
        assert verify(storage).ok


@pytest.mark.parametrize("mode", [Mode.FULL, Mode.INCREMENTAL])
def test_a_held_lease_makes_compaction_report_busy(tmp_path: Path, mode: Mode) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        lease = storage.coordination.acquire_lease(f"compact:{cid}", "someone-else", 60)
        assert lease is not None
        report = CompactionEngine(app).compact(storage, cid, mode, wait_seconds=0.2)
        assert report.busy and not report.action_taken
        storage.coordination.release_lease(lease)
        assert CompactionEngine(app).compact(storage, cid, Mode.FULL).action_taken


def test_other_conversations_are_not_blocked(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    with app.project() as storage:
        first, _ = ingest(storage, "s1", texts(40))
        second, _ = ingest(storage, "s2", texts(40))
        lease = storage.coordination.acquire_lease(f"compact:{first}", "someone-else", 60)
        assert lease is not None
        assert CompactionEngine(app).compact(storage, second, Mode.FULL, wait_seconds=0).action_taken


def test_small_write_batches_give_the_same_dag_shape(tmp_path: Path) -> None:
    from dataclasses import replace

    from lcm_framework.compaction import CompactionSettings
    from tests.compaction.test_lossless_property import context_messages

    app, _ = scripted_app(project_dir(tmp_path), {})
    settings = replace(CompactionSettings.from_config(app.config), max_pending_passes=2)
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", texts(80))
        report = CompactionEngine(app, settings=settings).compact(storage, cid, Mode.FULL)
        assert report.created_by_depth[0] >= 8
        assert context_messages(storage, cid) == [m.message_id for m in stored]
        assert verify(storage).ok
