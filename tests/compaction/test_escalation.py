"""Three-level escalation with a scripted summarizer plugin: oversized, empty and failing providers."""

from __future__ import annotations

from pathlib import Path

import pytest

from lcm_framework.compaction import TRUNCATION_MARKER, CompactionEngine, Mode
from lcm_framework.compaction.escalation import truncate_text
from lcm_framework.errors import PluginError
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.recall import verify
from lcm_framework.summarize.contracts import Level

from .helpers import ingest, make_app, project_dir, scripted_app, texts


def _leaf_contents(app, script):  # type: ignore[no-untyped-def]
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(20))
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        leaves = storage.summaries.list_summaries(cid, depth=0)
        assert leaves and verify(storage).ok
        return report, leaves


def test_oversized_normal_output_escalates_to_the_aggressive_prompt(tmp_path: Path) -> None:
    app, summarizer = scripted_app(project_dir(tmp_path), {"normal": "oversized"})
    report, leaves = _leaf_contents(app, None)
    assert report.outcomes.get("aggressive") == report.created_by_depth[0]
    normal = [r for r in summarizer.requests if r.level is Level.NORMAL and r.depth == 0]
    aggressive = [r for r in summarizer.requests if r.level is Level.AGGRESSIVE and r.depth == 0]
    assert normal[0].temperature == pytest.approx(0.2) and aggressive[0].temperature == pytest.approx(0.1)
    assert aggressive[0].target_tokens < normal[0].target_tokens
    assert "much shorter" in aggressive[0].prompt  # the leaf_aggressive template
    assert all("(aggressive)" in leaf.content for leaf in leaves)


def test_empty_then_failing_provider_falls_back_to_truncation(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {"normal": "empty", "aggressive": "error"},
                          {"compaction.truncate_tokens": 64})
    report, leaves = _leaf_contents(app, None)
    assert report.outcomes == {"truncated": report.passes}
    assert any("empty output" in f for f in report.failures)
    assert any("SummarizerError" in f and "529" in f for f in report.failures)
    assert all(TRUNCATION_MARKER in leaf.content for leaf in leaves)
    assert all(leaf.token_count <= 64 for leaf in leaves)


def test_unexpected_exceptions_are_provider_failures_too(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {"normal": "crash", "aggressive": "crash"})
    report, _ = _leaf_contents(app, None)
    assert report.outcomes == {"truncated": report.passes}
    assert any("RuntimeError" in f for f in report.failures)


def test_incremental_compaction_never_raises_into_ingestion(tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {"normal": "error", "aggressive": "error"})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        report = CompactionEngine(app).compact(storage, cid, Mode.INCREMENTAL)
        leaves = report.created_by_depth[0]
        assert set(report.created_by_depth) == {0} and report.outcomes == {"truncated": leaves}


def test_truncation_is_deterministic_and_bounded() -> None:
    def count(text: str) -> int:
        return (len(text) + 3) // 4

    text = "\n".join(f"line {i} " + "x" * 50 for i in range(500))
    cut = truncate_text(text, 100, count)
    assert cut == truncate_text(text, 100, count)
    assert TRUNCATION_MARKER in cut and count(cut) <= 100
    assert cut.startswith("line 0 ") and cut.rstrip().endswith("x")
    assert truncate_text("short", 100, count) == "short"


class _BrokenFactory:
    @hookimpl
    def lcm_register_summarizers(self, register):  # type: ignore[no-untyped-def]
        def factory(_config):  # type: ignore[no-untyped-def]
            raise RuntimeError("model file missing")

        register("broken", factory)


def test_a_broken_summarizer_plugin_is_a_clear_error_and_never_breaks_ingestion(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path), {"summarizer.provider": "broken"}, extra=[("broken", _BrokenFactory())])
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        report = CompactionEngine(app).compact(storage, cid, Mode.INCREMENTAL)
        assert not report.action_taken and "model file missing" in report.failures[0]
        with pytest.raises(PluginError, match="'broken' failed to start: RuntimeError: model file missing"):
            CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert verify(storage).ok


def test_a_span_no_summary_can_shrink_is_left_raw(tmp_path: Path) -> None:
    """Tiny old messages: even truncation would not be smaller, so compaction must not grow the context."""
    app, _ = scripted_app(project_dir(tmp_path), {"normal": "empty", "aggressive": "empty"},
                          {"compaction.truncate_tokens": 512})
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", texts(14, words=3))
        before = storage.context.token_total(cid)
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert not report.action_taken and report.skipped_no_gain == 1
        assert storage.summaries.list_summaries(cid) == []
        assert storage.context.token_total(cid) == before
        assert [i.message_id for i in storage.context.list_items(cid)] == [m.message_id for m in stored]
