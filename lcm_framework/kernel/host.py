"""What LCM hands a plugin's command (``run(args, app)``) or capability (``handler(app, args)``): the resolved
configuration, the loaded plugins and the storage backend behind the core's checks, nothing around them.

``App`` (the composition root each process builds once) is one; plugins name this protocol, never ``App``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..config import Config
    from ..storage.contracts import ProjectStorage, StorageBackendFactory
    from ..storage.models import ProjectRef
    from ..summarize.contracts import Summarizer
    from .plugins import Plugins


class Host(Protocol):
    """What LCM hands a plugin's command or capability (one per process, built once at its top)."""

    config: Config
    plugins: Plugins

    @property
    def storage(self) -> StorageBackendFactory:
        """The configured backend; every repository call goes through the core's checks."""
        ...

    def project_ref(self, root: Path | str | None = None) -> ProjectRef:
        """The project at ``root`` (default: the configured project root)."""
        ...

    def project(self, root: Path | str | None = None) -> AbstractContextManager[ProjectStorage]:
        """One project's storage for a ``with`` block (created when nothing is stored for it yet)."""
        ...

    def existing_project(self, root: Path | str | None = None) -> AbstractContextManager[ProjectStorage | None]:
        """Like ``project()``, but ``None`` when nothing is stored for the project: a read creates nothing."""
        ...

    def summarizer(self, name: str | None = None) -> Summarizer:
        """The summarizer ``name`` (default: ``summarizer.provider``)."""
        ...
