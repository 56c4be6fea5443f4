"""The composition root shared by the CLI, daemon and MCP server.

Holds the resolved configuration and plugins; opens the storage backend on
first use and owns it until ``close()``.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ConfigError
from .paths import project_id_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .config import Config
    from .kernel.plugins import Plugins
    from .storage.contracts import ProjectStorage, StorageBackendFactory
    from .storage.models import ProjectRef
    from .summarize.contracts import Summarizer


class App:
    """The composition root a command or capability receives: ``config``, ``plugins``, the backend
    (``storage``, opened on first use), ``project()`` and the configured ``summarizer()``.
    """

    def __init__(self, config: Config, plugins: Plugins) -> None:
        self.config = config
        self.plugins = plugins
        self._lock = threading.Lock()
        self._factory: StorageBackendFactory | None = None

    @property
    def storage(self) -> StorageBackendFactory:
        with self._lock:
            if self._factory is None:
                from .storage.selection import open_backend

                self._factory = open_backend(self.config, plugins=self.plugins)
            return self._factory

    def project_ref(self, root: Path | str | None = None) -> ProjectRef:
        from .storage.models import ProjectRef

        path = Path(root).resolve() if root is not None else self.config.project_root
        return ProjectRef(project_id=project_id_for(path), root=str(path))

    @contextmanager
    def project(self, root: Path | str | None = None) -> Iterator[ProjectStorage]:
        """Open one project's storage for the duration of a ``with`` block."""
        storage = self.storage.open_project(self.project_ref(root))
        try:
            yield storage
        finally:
            storage.close()

    @contextmanager
    def existing_project(self, root: Path | str | None = None) -> Iterator[ProjectStorage | None]:
        """Like ``project()``, but ``None`` when nothing is stored for the project yet: a command that only
        reads opens this, so it never creates a project (``StorageBackendFactory.open_existing_project``)."""
        storage = self.storage.open_existing_project(self.project_ref(root))
        try:
            yield storage
        finally:
            if storage is not None:
                storage.close()

    @cached_property
    def summarizer_name(self) -> str:
        """``summarizer.provider``; for ``auto``, the name of the summarizer the ``auto`` factory picks."""
        provider = str(self.config.get("summarizer.provider"))
        if provider == "auto":
            return str(self.summarizer("auto").name)
        return provider

    def summarizer(self, name: str | None = None) -> Summarizer:
        """The summarizer ``name`` (default: ``summarizer.provider``, whose ``auto`` factory picks one)."""
        chosen = name or str(self.config.get("summarizer.provider"))
        factories = self.plugins.summarizers()
        if chosen not in factories:
            raise ConfigError(
                f"summarizer.provider={chosen!r} is not registered (available: {', '.join(sorted(factories))})"
            )
        return factories[chosen](self.config)

    def close(self) -> None:
        with self._lock:
            if self._factory is not None:
                self._factory.close()
                self._factory = None
