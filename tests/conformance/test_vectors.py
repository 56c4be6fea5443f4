"""The semantic lane's vectors: one per message and summary, their embedder recorded, nearest by cosine."""

from __future__ import annotations

import pytest

from lcm_framework.errors import ConflictError, DataValidationError
from lcm_framework.storage.contracts import ProjectStorage, StorageBackendFactory
from lcm_framework.storage.models import (
    NewMessage,
    NewSummary,
    Role,
    SearchTarget,
    StoredVector,
    SubagentLink,
    SummaryKind,
    VectorQuery,
    VectorSpace,
)
from tests.conftest import skip_or_fail

from .conftest import make_ref

SPACE = VectorSpace("test-embedder", 4)


@pytest.fixture(autouse=True)
def _numpy() -> None:
    try:
        import numpy  # noqa: F401
    except ImportError:
        skip_or_fail("the semantic lane needs NumPy (pip install -e '.[test,semantic]')")


def unit(*xs: float) -> tuple[float, ...]:
    norm = sum(x * x for x in xs) ** 0.5
    return tuple(x / norm for x in xs)


def stored(target: SearchTarget, target_id: str, *xs: float) -> StoredVector:
    from lcm_framework.embedding.codec import quantize

    return StoredVector(target, target_id, quantize([unit(*xs)])[0])


def messages(project: ProjectStorage, session: str, count: int) -> list[str]:
    conv = project.conversations.get_or_create_conversation(session)
    added = project.conversations.append_messages(conv.conversation_id,
                                                  [NewMessage(Role.USER, f"turn {n}", 1) for n in range(count)])
    return [str(m.message_id) for m in added]


def nearest(project: ProjectStorage, *xs: float, **kw: object) -> list[str]:
    return [h.id for h in project.vectors.nearest(VectorQuery(SearchTarget.MESSAGES, unit(*xs), **kw))]  # type: ignore[arg-type]


def test_vectors_are_found_nearest_first_and_counted(project: ProjectStorage) -> None:
    a, b, c = messages(project, "s", 3)
    assert project.vectors.space() is None
    with pytest.raises(ConflictError):
        project.vectors.put([stored(SearchTarget.MESSAGES, a, 1, 0, 0, 0)])
    assert project.vectors.set_space(SPACE) is False
    assert project.vectors.space() == SPACE
    assert project.vectors.put([stored(SearchTarget.MESSAGES, a, 1, 0, 0, 0),
                                stored(SearchTarget.MESSAGES, b, 0, 1, 0, 0)]) == 2
    assert project.vectors.put([stored(SearchTarget.MESSAGES, a, 0, 0, 1, 0)]) == 0  # kept, not replaced
    assert project.vectors.unembedded(SearchTarget.MESSAGES, limit=10) == [c]
    project.vectors.put([stored(SearchTarget.MESSAGES, c, 1, 0.9, 0, 0)])
    hits = project.vectors.nearest(VectorQuery(SearchTarget.MESSAGES, unit(1, 0.1, 0, 0), limit=2))
    assert [h.id for h in hits] == [a, c]
    assert hits[0].score > hits[1].score and 0.9 < hits[0].score <= 1.0
    assert hits[0].conversation_id is not None and hits[0].created_at.tzinfo is not None
    counts = project.vectors.counts()
    assert (counts[SearchTarget.MESSAGES].embedded, counts[SearchTarget.MESSAGES].stored) == (3, 3)
    assert counts[SearchTarget.MESSAGES].newest == c


def test_an_id_no_longer_stored_is_skipped_and_a_deleted_message_takes_its_vector(project: ProjectStorage) -> None:
    a, b = messages(project, "s", 2)
    project.vectors.set_space(SPACE)
    assert project.vectors.put([stored(SearchTarget.MESSAGES, "999999", 1, 0, 0, 0),
                                stored(SearchTarget.MESSAGES, a, 1, 0, 0, 0),
                                stored(SearchTarget.MESSAGES, b, 0.9, 0.1, 0, 0)]) == 2
    assert nearest(project, 1, 0, 0, 0) == [a, b]
    project.conversations.delete_messages([int(a)])
    assert nearest(project, 1, 0, 0, 0) == [b]


def test_another_embedder_drops_the_vectors_and_new_ones_are_found(project: ProjectStorage) -> None:
    a, b = messages(project, "s", 2)
    project.vectors.set_space(SPACE)
    project.vectors.put([stored(SearchTarget.MESSAGES, a, 1, 0, 0, 0)])
    assert nearest(project, 1, 0, 0, 0) == [a]
    assert project.vectors.set_space(SPACE) is False
    assert project.vectors.set_space(VectorSpace("other", 3)) is True
    assert project.vectors.unembedded(SearchTarget.MESSAGES, limit=10) == [a, b]
    project.vectors.put([stored(SearchTarget.MESSAGES, b, 1, 0, 0)])
    assert [h.id for h in project.vectors.nearest(VectorQuery(SearchTarget.MESSAGES, unit(1, 0, 0)))] == [b]
    with pytest.raises(DataValidationError):
        project.vectors.put([stored(SearchTarget.MESSAGES, a, 1, 0, 0, 0)])  # 4 dimensions in a space of 3


def test_pages_resume_after_the_last_id(project: ProjectStorage) -> None:
    ids = messages(project, "s", 5)
    project.vectors.set_space(SPACE)
    project.vectors.put([stored(SearchTarget.MESSAGES, ids[1], 1, 0, 0, 0)])
    first = project.vectors.unembedded(SearchTarget.MESSAGES, limit=2)
    assert first == [ids[0], ids[2]]
    assert project.vectors.unembedded(SearchTarget.MESSAGES, after=first[-1], limit=10) == ids[3:]


def test_summaries_have_vectors_too(project: ProjectStorage) -> None:
    (a,) = messages(project, "s", 1)
    conv = project.conversations.find_conversations("s")[0]
    summary = project.summaries.create_summary(NewSummary(
        "sum_" + "a" * 16, conv.conversation_id, SummaryKind.LEAF, 0, "a summary", 2, None, None, 1,
        source_message_ids=(int(a),)))
    project.vectors.set_space(SPACE)
    assert project.vectors.unembedded(SearchTarget.SUMMARIES, limit=5) == [summary.summary_id]
    project.vectors.put([stored(SearchTarget.SUMMARIES, summary.summary_id, 0, 0, 0, 1)])
    hits = project.vectors.nearest(VectorQuery(SearchTarget.SUMMARIES, unit(0, 0, 0.1, 1)))
    assert [h.id for h in hits] == [summary.summary_id]
    assert project.vectors.counts()[SearchTarget.SUMMARIES].embedded == 1


def test_nearest_keeps_to_a_conversation_and_can_leave_sub_agent_runs_out(project: ProjectStorage) -> None:
    (main,) = messages(project, "main", 1)
    (run,) = messages(project, "run", 1)
    child = project.conversations.find_conversations("run")[0].conversation_id
    project.conversations.link_subagent(SubagentLink(child, "main"))
    project.vectors.set_space(SPACE)
    project.vectors.put([stored(SearchTarget.MESSAGES, main, 1, 0, 0, 0),
                         stored(SearchTarget.MESSAGES, run, 1, 0.1, 0, 0)])
    assert nearest(project, 1, 0, 0, 0) == [main, run]
    assert nearest(project, 1, 0, 0, 0, include_subagents=False) == [main]
    assert nearest(project, 1, 0, 0, 0, conversation_id=child) == [run]


def test_bad_vector_calls_are_refused_before_the_backend(project: ProjectStorage) -> None:
    with pytest.raises(DataValidationError):
        project.vectors.nearest(VectorQuery(SearchTarget.MEMORY, unit(1, 0, 0, 0)))
    with pytest.raises(DataValidationError):
        project.vectors.nearest(VectorQuery(SearchTarget.MESSAGES, (float("nan"), 0.0)))
    with pytest.raises(DataValidationError):
        project.vectors.set_space(VectorSpace("x\x00", 4))


def test_a_scope_opened_again_finds_the_vectors_without_loading_them_again(
        factory: StorageBackendFactory, project: ProjectStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP server and ``lcm ui`` open a scope per request: each must not read every vector back."""
    from lcm_framework.embedding.codec import VectorIndex

    ids = messages(project, "s", 3)
    project.vectors.set_space(SPACE)
    project.vectors.put([stored(SearchTarget.MESSAGES, i, 1, n, 0, 0) for n, i in enumerate(ids)])
    assert nearest(project, 1, 0, 0, 0, limit=1) == [ids[0]]
    loaded: list[int] = []
    real_add = VectorIndex.add
    monkeypatch.setattr(VectorIndex, "add", lambda self, rows: (loaded.append(len(rows)), real_add(self, rows))[1])
    again = factory.open_project(make_ref("alpha"))
    try:
        assert nearest(again, 1, 0, 0, 0, limit=1) == [ids[0]]
        assert sum(loaded) == 0
        (added,) = messages(again, "s", 1)
        again.vectors.put([stored(SearchTarget.MESSAGES, added, 1, -1, 0, 0)])
        assert nearest(again, 1, -1, 0, 0, limit=1) == [added]
        assert sum(loaded) == 1  # only the row added since
    finally:
        again.close()
