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
from lcm_framework.storage.models import SearchTarget
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

    def parent_never_loaded_the_model() -> None:
        assert semantic._LOADED == {}
        assert not [c for c in children() if lane_feed.CHILD in c]  # the embedding process has ended

    assert imported(tmp_path, parent_never_loaded_the_model) == (4, 4, True)


def test_a_dead_embedding_process_loses_no_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(lane_feed, "CHILD", "lcm_framework.recall.no_such_embedder")  # the child dies at once
    with caplog.at_level(logging.WARNING, logger="lcm.recall"):
        assert imported(tmp_path) == (4, 4, True)  # embedded after the import instead
    assert "embedding beside the import stopped" in caplog.text


def test_one_embedding_process_serves_every_project_of_an_import(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []

    class Counted(lane_feed.Child):
        def __init__(self, module: str) -> None:
            started.append(module)
            super().__init__(module)

    monkeypatch.setattr(lane_feed, "Child", Counted)
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
    assert started == [lane_feed.CHILD]  # one process and one model for the three projects
