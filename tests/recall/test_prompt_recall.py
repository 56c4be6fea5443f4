"""Prompt-time recall ranks as ``lcm search`` does, on every backend: a plain-words question surfaces the
memory it is about, an unrelated one surfaces nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lcm_framework.config.schema import SETTINGS
from lcm_framework.memory import hints, store
from lcm_framework.memory.scope import MemoryScope
from lcm_framework.scrub import Scrubber
from lcm_framework.storage.contracts import StorageBackendFactory
from tests.conformance.conftest import factory, make_ref
from tests.memory.conftest import scrubber

__all__ = ["factory", "scrubber"]

DEPLOY = "Deploys go through the blue-green script scripts/bg_deploy.sh, never kubectl apply by hand"
MIN_SCORE = SETTINGS["memory.recall_min_score"].default


@pytest.fixture
def scope(factory: StorageBackendFactory, scrubber: Scrubber) -> Iterator[MemoryScope]:
    opened = factory.open_project(make_ref("prompt-recall"))
    try:
        yield MemoryScope(opened, user_wide=False, scrubber_factory=lambda: scrubber)
    finally:
        opened.close()


def _surfaced(scope: MemoryScope, prompt: str) -> list[str]:
    shown = hints.for_prompt(scope, None, prompt, session_id=None, min_score=float(MIN_SCORE), max_tokens=2000)
    return [str(item["id"]) for item in shown["items"]]  # type: ignore[attr-defined]


def test_a_deploy_question_in_plain_words_surfaces_the_deploy_memory(scope: MemoryScope) -> None:
    deploy = store.memory_ref(store.remember(scope.storage, DEPLOY, scrubber=scope.scrubber()).memory.memory_id)
    store.remember(scope.storage, "The billing tests need the fake Stripe server on port 12111",
                   scrubber=scope.scrubber())
    # one shared stem out of three: the old word-overlap score (0.17) fell under recall_min_score
    assert _surfaced(scope, "how do we deploy this service to production?") == [deploy]
    assert _surfaced(scope, "run the blue-green deploy script") == [deploy]
    assert _surfaced(scope, "what is the capital of Peru") == []


def test_session_start_restores_the_memories_relevant_to_the_newest_conversation_first(scope: MemoryScope) -> None:
    from lcm_framework.storage.models import NewMessage, Role

    sure = store.memory_ref(store.remember(scope.storage, "Use pnpm, never npm, in this repository",
                                           scrubber=scope.scrubber(), confidence=0.95).memory.memory_id)
    deploy = store.memory_ref(store.remember(scope.storage, DEPLOY, scrubber=scope.scrubber(),
                                             confidence=0.3).memory.memory_id)
    assert [h.id for h in hints.session_memories(scope, None, 1)] == [sure]  # nothing to go on: confidence
    conversation = scope.storage.conversations.get_or_create_conversation("yesterday")
    scope.storage.conversations.append_messages(conversation.conversation_id, [
        NewMessage(Role.USER, "the production deploy of the billing service failed halfway", 10),
        NewMessage(Role.ASSISTANT, "I will look at the rollout logs", 8)])
    # the old restore took the most confident memories whatever the work was about
    assert [h.id for h in hints.session_memories(scope, None, 1)] == [deploy]
    assert [h.id for h in hints.session_memories(scope, None, 2)] == [deploy, sure]
