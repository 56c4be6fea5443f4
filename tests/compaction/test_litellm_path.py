"""The real litellm call path (litellm's ``mock_response``, no network) inside compaction."""

from __future__ import annotations

from pathlib import Path

from lcm_framework.compaction import TRUNCATION_MARKER, CompactionEngine, Mode
from lcm_framework.recall import verify

from .helpers import ingest, make_app, project_dir, texts

OVERRIDES = {"summarizer.provider": "litellm", "summarizer.model": "openai/gpt-4o-mini",
             "summarizer.max_retries": 0, "compaction.truncate_tokens": 64}


def _summarizer(app, mock: str):  # type: ignore[no-untyped-def]
    from lcm_summarizers.llm import LitellmSummarizer

    return LitellmSummarizer(app.config, completion_kwargs={"mock_response": mock})


def test_litellm_summaries_become_leaves(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path), OVERRIDES)
    text = "[2026-02-17 07:00] Fixed the flaky test in tests/test_api.py by pinning the clock."
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(20))
        report = CompactionEngine(app, summarizer=_summarizer(app, text)).compact(storage, cid, Mode.FULL)
        leaves = storage.summaries.list_summaries(cid, depth=0)
        assert leaves and all(leaf.content == text for leaf in leaves)
        assert report.outcomes.get("normal") == report.passes and verify(storage).ok


def test_litellm_empty_response_falls_back_to_truncation(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path), OVERRIDES)
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(20))
        report = CompactionEngine(app, summarizer=_summarizer(app, "   ")).compact(storage, cid, Mode.FULL)
        assert report.outcomes == {"truncated": report.passes}
        assert any("SummarizerError" in f for f in report.failures)
        assert all(TRUNCATION_MARKER in s.content for s in storage.summaries.list_summaries(cid, depth=0))


def _fell_back(storage, cid: int, report) -> None:  # type: ignore[no-untyped-def]
    assert report.fallback and "offline extractive summarizer" in report.fallback
    assert "truncated" not in report.outcomes and report.passes > 0
    leaves = storage.summaries.list_summaries(cid, depth=0)
    assert leaves and not any(TRUNCATION_MARKER in leaf.content for leaf in leaves)
    assert verify(storage).ok


def test_a_quota_failure_falls_back_to_the_offline_summarizer_once(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path), OVERRIDES)
    summarizer = _summarizer(app, "litellm.RateLimitError")
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        engine = CompactionEngine(app, summarizer=summarizer)
        report = engine.compact(storage, cid, Mode.FULL)
        _fell_back(storage, cid, report)
        assert "RateLimitError" in report.fallback
        assert summarizer.attempts == 1  # the model is not asked again for every later pass


def test_a_missing_api_key_falls_back_to_the_offline_summarizer(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lcm_summarizers.llm import LitellmSummarizer

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = make_app(project_dir(tmp_path), {**OVERRIDES, "summarizer.model": "anthropic/claude-3-5-haiku-latest"})
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", texts(40))
        report = CompactionEngine(app, summarizer=LitellmSummarizer(app.config)).compact(storage, cid, Mode.FULL)
        _fell_back(storage, cid, report)
        assert "AuthenticationError" in report.fallback
