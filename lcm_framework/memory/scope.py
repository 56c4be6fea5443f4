"""The two memory scopes: the current project, and one user-wide store for preferences of every project."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ScrubberError
from .store import GLOBAL_PREFIX, PROJECT_PREFIX

if TYPE_CHECKING:
    from ..app import App
    from ..embedding import Embedder
    from ..scrub import Scrubber
    from ..storage.contracts import ProjectStorage

USER_WIDE_DIR = "user-memory"


@dataclass(frozen=True, slots=True)
class MemoryScope:
    storage: ProjectStorage
    user_wide: bool
    scrubber_factory: Callable[[], Scrubber] | None = None
    """Builds the scrubber memories are stored through; None for a scope that only reads (prompt recall)."""
    embedder: Embedder | None = None
    """The semantic lane's embedder (``recall.semantic``): prompt-time recall and restore also rank memories
    by meaning; None: lexical only."""

    def scrubber(self) -> Scrubber:
        """The scrubber a memory written in this scope goes through (ScrubberError when it cannot be built)."""
        if self.scrubber_factory is None:
            raise ScrubberError("this memory scope is read-only: it has no scrubber to store memories through")
        return self.scrubber_factory()

    @property
    def prefix(self) -> str:
        return GLOBAL_PREFIX if self.user_wide else PROJECT_PREFIX

    def ref(self, memory_id: int) -> str:
        return f"{self.prefix}{memory_id}"


def user_wide_root(app: App) -> Path:
    """The pseudo project root whose storage holds user-wide memories (``$LCM_HOME/user-memory``)."""
    return Path(app.config.home) / USER_WIDE_DIR


@contextmanager
def memory_scope(app: App, *, user_wide: bool = False) -> Iterator[MemoryScope]:
    """The storage memories live in: this project's, or the user-wide one, open for a ``with`` block. Memories
    stored in either are scrubbed with the rules of the app's project."""
    from ..scrub.gate import project_scrubber

    scrubber = project_scrubber(app)  # fails closed before the scope's storage is created
    with app.project(user_wide_root(app) if user_wide else None) as storage:
        yield MemoryScope(storage, user_wide, lambda: scrubber)


@contextmanager
def existing_memory_scope(app: App, *, user_wide: bool = False) -> Iterator[MemoryScope | None]:
    """Like ``memory_scope``, but ``None`` when nothing is stored in that scope yet (it is not created)."""
    from ..scrub.gate import project_scrubber

    with app.existing_project(user_wide_root(app) if user_wide else None) as storage:
        yield None if storage is None else MemoryScope(storage, user_wide, partial(project_scrubber, app))
