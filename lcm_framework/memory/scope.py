"""The two memory scopes: the current project, and one user-wide store for preferences of every project."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .store import GLOBAL_PREFIX, PROJECT_PREFIX

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage

USER_WIDE_DIR = "user-memory"


@dataclass(frozen=True, slots=True)
class MemoryScope:
    storage: ProjectStorage
    user_wide: bool

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
    """The storage memories live in: this project's, or the user-wide one, open for a ``with`` block."""
    with app.project(user_wide_root(app) if user_wide else None) as storage:
        yield MemoryScope(storage, user_wide)
