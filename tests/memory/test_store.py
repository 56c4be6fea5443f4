"""Memory store rules (dedup, confidence, review, forget) on every storage backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import pytest

from lcm_framework.memory import store
from lcm_framework.memory.text import same_insight
from lcm_framework.scrub import Scrubber
from lcm_framework.storage.contracts import ProjectStorage, StorageBackendFactory
from lcm_framework.storage.lineage import Lineage, parse
from tests.conformance.conftest import factory, make_ref

__all__ = ["factory"]

REWORDED = [
    ("Use uv instead of pip for installing packages", "Install packages with uv, not pip"),
    ("The daemon listens on port 7811", "Daemon port is 7811"),
    ("Root cause: the SQLite busy handler dropped locks; fix: retry short waits",
     "Fix for dropped locks: retry in short waits instead of the SQLite busy handler"),
    ("Tests must run with -n 2 on this machine", "Always run the tests with -n 2 on this machine"),
]
DISTINCT = [
    ("Run tests with pytest -n 2", "Run ruff before committing"),
    ("Store timestamps in UTC microseconds", "Store ids as integers"),
    ("Never use pip", "Use pip"),
]


Remember = Callable[..., store.Stored]


@pytest.fixture
def remember(scrubber: Scrubber) -> Remember:
    """``store.remember`` through the built-in rules."""
    return partial(store.remember, scrubber=scrubber)


@pytest.fixture
def storage(factory: StorageBackendFactory) -> Iterator[ProjectStorage]:
    opened = factory.open_project(make_ref("memory"))
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.parametrize(("first", "second"), REWORDED)
def test_reworded_duplicates_are_one_insight(first: str, second: str) -> None:
    assert same_insight(first, second) and same_insight(second, first)


@pytest.mark.parametrize(("first", "second"), DISTINCT)
def test_distinct_insights_stay_apart(first: str, second: str) -> None:
    assert not same_insight(first, second)


def test_a_reworded_duplicate_raises_confidence_instead_of_copying(storage: ProjectStorage, remember: Remember) -> None:
    first = remember(storage, REWORDED[0][0], tags=("tooling", "python"), confidence=0.5)
    again = remember(storage, REWORDED[0][1], tags=("other",))
    exact = remember(storage, "  use UV instead of pip, for installing packages. ")
    assert first.created and not again.created and not exact.created
    assert again.memory.memory_id == exact.memory.memory_id == first.memory.memory_id
    assert first.memory.confidence < again.memory.confidence < exact.memory.confidence < 1.0
    assert again.memory.tags == ("tooling", "python")
    other = remember(storage, DISTINCT[0][0])
    assert other.created and len(storage.promoted_memory.list_memories()) == 2


def test_a_duplicate_of_an_archived_memory_revives_it(storage: ProjectStorage, remember: Remember) -> None:
    first = remember(storage, "Deploys go through the staging branch")
    storage.promoted_memory.archive(first.memory.memory_id)
    again = remember(storage, "deploys go through the staging branch!")
    assert not again.created and not again.memory.archived


def test_feedback_and_ignored_surfacing_move_confidence(storage: ProjectStorage, remember: Remember) -> None:
    useful = remember(storage, "Migrations live in plugins/lcm_postgres/migrations").memory
    ignored = remember(storage, "The CLI never prints from the core").memory
    ref_useful, ref_ignored = store.memory_ref(useful.memory_id), store.memory_ref(ignored.memory_id)
    raised = store.feedback(storage, useful.memory_id, ref_useful, useful=True)
    assert raised.confidence > useful.confidence
    lowered = store.feedback(storage, useful.memory_id, ref_useful, useful=False)
    assert lowered.confidence < raised.confidence
    for _ in range(store.IGNORED_EVERY):
        store.record_surfacing(storage, [ref_useful, ref_ignored], query="where are migrations")
    after = storage.promoted_memory.get_memory(ignored.memory_id)
    assert after is not None and after.confidence < ignored.confidence
    kept = storage.promoted_memory.get_memory(useful.memory_id)
    assert kept is not None and kept.confidence == lowered.confidence  # it was useful once: not decayed
    counts = {s.memory.memory_id: s.recall for s in store.stats(storage)}
    assert counts[ignored.memory_id].surfaced == store.IGNORED_EVERY
    assert (counts[useful.memory_id].useful, counts[useful.memory_id].not_useful) == (1, 1)


def test_review_lists_only_stale_never_useful_memories(storage: ProjectStorage, remember: Remember) -> None:
    weak = remember(storage, "A weak guess about caching", confidence=0.2).memory
    helped = remember(storage, "A weak but useful hint about logging", confidence=0.1).memory
    storage.recall.record_feedback(store.memory_ref(helped.memory_id), useful=True)
    remember(storage, "A confident rule about formatting", confidence=0.9)
    assert store.review(storage, older_than_days=1) == []  # nothing old enough yet
    assert [m.memory_id for m in store.review(storage, older_than_days=0)] == [weak.memory_id]


def test_forget_deletes_the_memory_and_its_history(storage: ProjectStorage, remember: Remember) -> None:
    memory = remember(storage, "Temporary note").memory
    ref = store.memory_ref(memory.memory_id)
    store.record_surfacing(storage, [ref], query="note")
    store.forget(storage, memory.memory_id, ref)
    assert storage.promoted_memory.get_memory(memory.memory_id) is None
    assert storage.recall.stats(ref).surfaced == 0 and storage.recall.surfacings(ref) == []
    with pytest.raises(store.MemoryNotFoundError):
        store.forget(storage, memory.memory_id, ref)


def test_lineage_round_trips_through_metadata(storage: ProjectStorage, remember: Remember) -> None:
    lineage = Lineage("promotion", ("sum_ab", "sum_cd"), (3, 4), "decision")
    memory = remember(storage, "We chose RE2 for every scrubber rule", lineage=lineage).memory
    assert memory.source_summary_id == "sum_ab"
    assert parse(memory.metadata) == lineage
    assert parse("free text").extra == {"note": "free text"}


def test_memory_refs() -> None:
    assert store.parse_memory_ref("mem_12") == (12, False)
    assert store.parse_memory_ref("gmem_3") == (3, True)
    assert store.parse_memory_ref("7") == (7, False)
    for bad in ("mem_", "sum_12", "mem_x"):
        with pytest.raises(store.MemoryRefError):
            store.parse_memory_ref(bad)
