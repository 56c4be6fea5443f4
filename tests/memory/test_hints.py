"""Prompt-time recall selection on every backend: threshold, token cap, summaries already in context."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lcm_framework.memory import hints, store
from lcm_framework.memory.scope import MemoryScope
from lcm_framework.scrub import Scrubber
from lcm_framework.storage.contracts import ProjectStorage, StorageBackendFactory
from lcm_framework.storage.models import NewSummary, SummaryKind
from tests.compaction.helpers import ingest, texts
from tests.conformance.conftest import factory, make_ref

__all__ = ["factory"]


@pytest.fixture
def scope(factory: StorageBackendFactory, scrubber: Scrubber) -> Iterator[MemoryScope]:
    opened = factory.open_project(make_ref("hints"))
    try:
        yield MemoryScope(opened, user_wide=False, scrubber_factory=lambda: scrubber)
    finally:
        opened.close()


def add(scope: MemoryScope, text: str, confidence: float = 0.5) -> str:
    return store.memory_ref(store.remember(scope.storage, text, scrubber=scope.scrubber(),
                                           confidence=confidence).memory.memory_id)


def test_threshold_cap_and_order(scope: MemoryScope) -> None:
    strong = add(scope, "The payments worker retries webhooks from payments/retry.py", 0.9)
    weak = add(scope, "The payments worker logs to stdout", 0.1)
    add(scope, "Deploys go through the staging branch")
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
    assert scope.storage.recall.surfacings(strong)[0].query is None  # the prompt is never stored


def summarize(storage: ProjectStorage, session: str, content: str) -> str:
    """One leaf summary of a new session's three messages, put in its context in their place."""
    cid, stored = ingest(storage, session, texts(3))
    summary = storage.summaries.create_summary(NewSummary(
        f"sum_{session.encode().hex():0<16}"[:20], cid, SummaryKind.LEAF, 0, content, 30, None, None, 3,
        [m.message_id for m in stored]))
    storage.context.replace_range(cid, 0, 2, summary.summary_id)
    return summary.summary_id


def test_summaries_of_other_sessions_are_snippets_the_own_context_is_not(scope: MemoryScope) -> None:
    detail = "The flaky_ledger_test fails because ledger_seed.sql loads after the fixtures."
    old = summarize(scope.storage, "old", f"[07:00] user: run the suite\n[07:01] {detail}\n[07:02] done")
    own = summarize(scope.storage, "current", f"[08:00] {detail}")
    summarize(scope.storage, "unrelated", "[09:00] the css grid of the settings page was rebuilt")
    prompt = "why does flaky_ledger_test fail with ledger_seed.sql?"
    found = hints.for_prompt(scope, None, prompt, session_id="current", min_score=0.05, max_tokens=2000)
    assert [(i["id"], i["kind"]) for i in found["items"]] == [(old, "summary")]  # not own, not unrelated
    assert found["context"].startswith("# Restored context (LCM)")
    assert f"[07:01] {detail}</summary>" in found["context"] and "[07:02] done" not in found["context"]  # 2 lines
    elsewhere = hints.for_prompt(scope, None, prompt, session_id="another", min_score=0.05, max_tokens=2000)
    assert {i["id"] for i in elsewhere["items"]} == {old, own}
