"""``lcm import`` embeds in a process of its own beside the import (``recall.lane_feed``): every message gets its
vector, the importing process never loads the embedder, no process is left behind, and a dead embedding process
loses nothing (the import embeds what is left after it)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from lcm_framework.ingest.api import import_sources
from lcm_framework.recall import lane_feed, semantic
from lcm_framework.recall.across import search_all
from lcm_framework.storage.models import SearchTarget, StoredVector, VectorSpace
from tests.ingest.support import make_app
from tests.recall.test_semantic_lane import QUESTION, _wordllama, project, session  # noqa: F401  (autouse)


def children() -> list[str]:
    """The command lines of this process's child processes."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            continue
    return found


def imported(tmp_path: Path, after_import: Callable[[], None] = lambda: None) -> tuple[int, int, bool]:
    """``(embedded, stored)`` messages after importing the session, and whether search finds it by meaning;
    ``after_import`` runs between the import and the search (which embeds the query here)."""
    root = project(tmp_path)
    source = session(tmp_path / "s.jsonl", root)
    app = make_app(root)
    try:
        import_sources(app, [source], project=root)
        after_import()
        with app.project() as storage:
            counts = storage.vectors.counts()[SearchTarget.MESSAGES]
        found = search_all(app, QUESTION, limit=3, context=0)
        return counts.embedded, counts.stored, bool(found) and "Football" in found[0].hit.snippet
    finally:
        app.close()


def test_an_import_embeds_in_a_process_of_its_own_and_leaves_none_behind(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "_LOADED", {})
    started = counted_children(monkeypatch)
    turns = [(("user", "assistant")[n % 2], f"turn {n}: the nightly export filled volume {n}") for n in range(1_200)]
    root = project(tmp_path)
    source = session(tmp_path / "s.jsonl", root, turns)  # more than two batches of texts for the process
    app = make_app(root)
    try:
        import_sources(app, [source], project=root)
        assert semantic._LOADED == {}  # the embedding process loaded the model, not this one
        with app.project() as storage:
            counts = storage.vectors.counts()[SearchTarget.MESSAGES]
            assert (counts.embedded, counts.stored) == (1_200, 1_200)
    finally:
        app.close()
    assert len(started) == 1 and all(child.proc.returncode is not None for child in started)  # ended and reaped
    assert not [c for c in children() if lane_feed.CHILD in c]


def test_vectors_of_another_embedder_give_way_to_the_imports(tmp_path: Path) -> None:
    root = project(tmp_path)
    first = session(tmp_path / "a.jsonl", root)
    app = make_app(root, **{"recall.semantic": "off"})
    try:
        import_sources(app, [first], project=root)
        with app.project() as storage:
            storage.vectors.set_space(VectorSpace("another-embedder", 256))
            ids = storage.vectors.unembedded(SearchTarget.MESSAGES, after=None, limit=10)
            storage.vectors.put([StoredVector(SearchTarget.MESSAGES, i, bytes(256)) for i in ids])
    finally:
        app.close()
    turns = [("user", "and the release notes?"), ("assistant", "Drafted, waiting for review.")]
    second = session(tmp_path / "b.jsonl", root, turns)
    second.write_text(second.read_text().replace("5e5a0000-0000-0000-0000-000000000001",
                                                 "5e5a0000-0000-0000-0000-000000000002"))
    app = make_app(root)
    try:
        import_sources(app, [second], project=root)
        with app.project() as storage:
            counts = storage.vectors.counts()[SearchTarget.MESSAGES]
            assert storage.vectors.space() == VectorSpace("wordllama", 256)
            assert (counts.embedded, counts.stored) == (6, 6)  # the first session's messages embedded again
    finally:
        app.close()


def counted_children(monkeypatch: pytest.MonkeyPatch) -> list[lane_feed.Child]:
    """The embedding processes the lane feed starts from now on."""
    started: list[lane_feed.Child] = []

    class Counted(lane_feed.Child):
        def __init__(self, module: str) -> None:
            super().__init__(module)
            started.append(self)

    monkeypatch.setattr(lane_feed, "Child", Counted)
    return started


def test_a_dead_embedding_process_loses_no_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(lane_feed, "CHILD", "lcm_framework.recall.no_such_embedder")  # the child dies at once
    with caplog.at_level(logging.WARNING, logger="lcm.recall"):
        assert imported(tmp_path) == (4, 4, True)  # embedded after the import instead
    assert "embedding beside the import stopped" in caplog.text


def test_one_embedding_process_serves_every_project_of_an_import(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    started = counted_children(monkeypatch)
    roots = [tmp_path / name for name in ("a", "b", "c")]
    sources = tmp_path / "sessions"
    for n, root in enumerate(roots):
        (root / ".git").mkdir(parents=True)
        session(sources / f"s{n}.jsonl", root)
    app = make_app(roots[0])
    try:
        import_sources(app, [sources])  # each session goes to the project of its cwd
        for root in roots:
            with app.project(root) as storage:
                counts = storage.vectors.counts()[SearchTarget.MESSAGES]
                assert (counts.embedded, counts.stored) == (4, 4), root
    finally:
        app.close()
    assert len(started) == 1  # one process and one model for the three projects
