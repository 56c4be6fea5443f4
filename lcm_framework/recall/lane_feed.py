"""The semantic lane filled while ``lcm import`` runs: the messages each batch stored are embedded by a process
of its own (``embed_child``), beside the import, and their vectors written between batches.

A process, not a thread: the embedder's NumPy and tokenizer calls release the GIL only briefly, and a thread
of them beside the import's own short GIL-releasing calls (SQLite, RE2, zstd) left both waiting for it (50,000
messages embedded in a thread took the import from 0.52x to only 0.68x of its speed without the lane). A
thread here only talks to the child. The queue is bounded (``QUEUED`` batches of ``semantic.BATCH`` texts): an
import that outruns the embedder waits for it instead of holding every text in memory. Vectors are written
by the importing thread on its own connection, ``WRITE_EVERY`` at a time. ``finish`` waits for the child and
writes the rest; what it could not embed (no embedder here, an error, a dead child) is left to
``semantic.fill``, which the import runs after it where anything is left.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..child_process import Child
from ..storage.models import SearchTarget, StoredVector, VectorSpace
from .semantic import BATCH, TEXT_CHARS

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage

log = logging.getLogger("lcm.recall")

CHILD = "lcm_framework.recall.embed_child"
QUEUED = 8
"""Batches of texts waiting for the embedding process at most."""
WRITE_EVERY = 2_048
"""Vectors collected before the importing thread writes them."""


@dataclass(frozen=True, slots=True)
class EmbedSetup:
    """What the embedding process needs to load the parent's embedder: a project's configuration (the one
    of every project with the same lane settings)."""

    project_root: Path
    env: dict[str, str]
    flags: dict[str, Any]
    parent_pid: int


class LaneFeed:
    """Embeds the messages an import stores beside it (``offer``) and writes their vectors (``finish``): one
    embedding process for every project whose lane settings are the same (an import of a whole home touches
    many projects; a process each would hold a model each)."""

    def __init__(self, setup: EmbedSetup) -> None:
        self._setup = setup
        self._todo: queue.Queue[list[tuple[str, int, str]] | None] = queue.Queue(QUEUED)
        self._gathering: list[tuple[str, int, str]] = []
        self._storages: dict[str, ProjectStorage] = {}
        self._done: list[tuple[str, StoredVector]] = []
        self._done_lock = threading.Lock()
        self._space: VectorSpace | None = None
        self._spaced: set[str] = set()
        self._stopped = False
        self.dropped: set[str] = set()
        """The projects where writing the first vectors dropped another embedder's."""
        self._thread = threading.Thread(target=self._run, name="lcm-embed", daemon=True)
        self._thread.start()

    def offer(self, project_id: str, storage: ProjectStorage, stored: Sequence[tuple[int, str]]) -> None:
        """Queue the ``(message id, text)`` a batch of the project stored; write the vectors ready so far."""
        self._storages.setdefault(project_id, storage)
        if not self._stopped:
            self._gathering += [(project_id, message_id, text[:TEXT_CHARS]) for message_id, text in stored]
            if len(self._gathering) >= BATCH:  # a few hundred texts a call embed at half the cost of a few
                self._todo.put(self._gathering)
                self._gathering = []
        if len(self._done) >= WRITE_EVERY:
            self._write()

    def finish(self) -> None:
        """Wait for the child and write every vector it made."""
        if self._gathering:
            self._todo.put(self._gathering)
        self._todo.put(None)
        self._thread.join()
        self._write()

    def _write(self) -> None:
        with self._done_lock:
            ready, self._done = self._done, []
        if not ready or self._space is None:
            return
        by_project: dict[str, list[StoredVector]] = {}
        for project_id, vector in ready:
            by_project.setdefault(project_id, []).append(vector)
        for project_id, vectors in by_project.items():
            storage = self._storages[project_id]
            if project_id not in self._spaced:  # another embedder's vectors give way before these are written
                if storage.vectors.set_space(self._space):
                    self.dropped.add(project_id)
                self._spaced.add(project_id)
            storage.vectors.put(vectors)

    def _run(self) -> None:
        child: Child | None = None
        try:
            child = Child(CHILD)
            if child.send(self._setup):
                kind, value = child.inbox.recv()
                if kind == "ready":
                    self._space = value
                else:
                    self._stop(str(value), quietly=True)
            while (batch := self._todo.get()) is not None:
                if not self._stopped:
                    self._embed(child, batch)
        except (OSError, EOFError):  # no child, or it died
            self._stop("the embedding process could not start or ended")
            while self._todo.get() is not None:  # drain: the importing thread never blocks on a full queue
                pass
        finally:
            if child is not None:
                child.close(kill=self._stopped)

    def _embed(self, child: Child, batch: list[tuple[str, int, str]]) -> None:
        if not child.send([text for _, _, text in batch]):
            raise EOFError
        kind, value = child.inbox.recv()
        if kind != "vectors":
            self._stop(str(value))
            return
        made = [(project_id, StoredVector(SearchTarget.MESSAGES, str(message_id), vector))
                for (project_id, message_id, _), vector in zip(batch, value, strict=True)]
        with self._done_lock:
            self._done.extend(made)

    def _stop(self, why: str, *, quietly: bool = False) -> None:
        self._stopped = True
        (log.debug if quietly else log.warning)("embedding beside the import stopped (%s); what is left is "
                                                "embedded after it", why)
