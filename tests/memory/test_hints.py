"""Prompt-time recall selection on every backend: threshold, token cap, summaries already in context."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.compaction import CompactionEngine
from lcm_framework.memory import hints, store
from lcm_framework.memory.scope import MemoryScope
from lcm_framework.storage.contracts import ProjectStorage, StorageBackendFactory
from tests.compaction.helpers import ingest, make_app, new_message, project_dir, texts
from tests.conformance.conftest import factory, make_ref

__all__ = ["factory"]


@pytest.fixture
def scope(factory: StorageBackendFactory) -> Iterator[MemoryScope]:
    opened = factory.open_project(make_ref("hints"))
    try:
        yield MemoryScope(opened, user_wide=False)
    finally:
        opened.close()


def add(storage: ProjectStorage, text: str, confidence: float = 0.5) -> str:
    return store.memory_ref(store.remember(storage, text, confidence=confidence).memory.memory_id)


def test_threshold_cap_and_order(scope: MemoryScope) -> None:
    strong = add(scope.storage, "The payments worker retries webhooks from payments/retry.py", 0.9)
    weak = add(scope.storage, "The payments worker logs to stdout", 0.1)
    add(scope.storage, "Deploys go through the staging branch")
    prompt = "why does the payments worker retry webhooks twice in payments/retry.py?"
    everything = hints.for_prompt(scope, None, prompt, session_id=None, min_score=0.0, max_tokens=10_000)
    ids = [i["id"] for i in everything["items"]]
    assert ids[0] == strong and weak in ids
    capped = hints.for_prompt(scope, None, prompt, session_id=None, min_score=0.0, max_tokens=40)
    assert [i["id"] for i in capped["items"]] == [strong] and capped["tokens"] <= 40
    strict = hints.for_prompt(scope, None, prompt, session_id=None, min_score=0.99, max_tokens=10_000)
    assert strict == {"items": [], "tokens": 0, "context": ""}
    surfaced = {ref: scope.storage.recall.stats(ref).surfaced for ref in (strong, weak)}
    assert surfaced == {strong: 2, weak: 1}
    assert scope.storage.recall.surfacings(strong)[0].query == prompt


def test_summaries_of_other_sessions_are_snippets_the_own_context_is_not(scope: MemoryScope,
                                                                         tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    storage = scope.storage
    detail = "The flaky_ledger_test fails because ledger_seed.sql loads after the fixtures"
    for session in ("old", "current"):
        cid, _ = ingest(storage, session, [new_message(0, detail), *texts(12, start=1)])
        CompactionEngine(app).compact(storage, cid)
    prompt = "why does flaky_ledger_test fail with ledger_seed.sql?"
    found = hints.for_prompt(scope, None, prompt, session_id="current", min_score=0.05, max_tokens=2000)
    summaries = [i["id"] for i in found["items"] if i["kind"] == "summary"]
    (old,) = storage.conversations.find_conversations("old")
    own = {s.summary_id for s in storage.summaries.list_summaries(
        storage.conversations.find_conversations("current")[0].conversation_id)}
    assert summaries and not own & set(summaries)
    assert all(s in {x.summary_id for x in storage.summaries.list_summaries(old.conversation_id)} for s in summaries)
    assert "flaky_ledger_test" in found["context"] and found["context"].startswith("# Restored context (LCM)")
    app.close()
