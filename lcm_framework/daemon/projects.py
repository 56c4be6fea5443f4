"""The daemon's per-project state: one ``App`` per project root and one read scope kept open for the read routes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import NotFoundError, StorageUnavailableError

if TYPE_CHECKING:
    from ..app import App
    from ..config import Config
    from ..kernel.plugins import Plugins
    from ..storage.contracts import ProjectStorage

T = TypeVar("T")
Run = Callable[..., Awaitable[Any]]


def no_such_project(app: App) -> NotFoundError:
    """The error of a read naming a project the backend holds nothing for (only writes create projects)."""
    return NotFoundError("no such project: nothing is stored for it (an ingest or a new memory creates it)",
                         backend=str(app.config.get("storage.backend")), domain="projects",
                         project=app.project_ref().project_id, code="no_such_project")


class ProjectScopes:
    """Apps and cached read scopes by project root; ``run`` runs a blocking call in a worker thread."""

    def __init__(self, config: Config, plugins: Plugins, overrides: Mapping[str, Any], run: Run) -> None:
        self._config = config
        self._plugins = plugins
        self._overrides = overrides
        self._run = run
        self._apps: dict[Path, App] = {}
        self._readers: dict[Path, ProjectStorage] = {}

    @property
    def roots(self) -> list[str]:
        """The project roots the daemon has served, sorted."""
        return sorted(str(p) for p in self._apps)

    def app_for(self, project: Path) -> App:
        """The ``App`` of one project root (its own config file applies), built once and kept."""
        from ..app import App
        from ..config import load_config

        root = project.resolve()
        app = self._apps.get(root)
        if app is None:
            config = load_config(project=root, env=self._config.env, overrides=self._overrides, plugins=self._plugins)
            app = self._apps.setdefault(root, App(config, self._plugins))
        return app

    async def find_reader(self, project: Path) -> ProjectStorage | None:
        """A project scope kept open for read routes (context, restore), closed by ``close``; ``None`` when the
        backend holds nothing for the project: a read never creates one."""
        root = project.resolve()
        found = self._readers.get(root)
        if found is None:
            opened: ProjectStorage | None = await self._run(self._open_existing, root)
            if opened is None:
                return None
            found = self._readers.setdefault(root, opened)
            if found is not opened:
                await self._run(opened.close)
        return found

    async def read(self, project: Path, fn: Callable[..., T], *args: Any, missing_ok: bool = False,
                   **kwargs: Any) -> T:
        """Run ``fn(scope, *args)`` on the project's cached read scope; a storage outage drops the scope. A
        project the backend does not hold raises ``no_such_project`` (``missing_ok``: ``fn`` gets ``None``)."""
        scope = await self.find_reader(project)
        if scope is None and not missing_ok:
            raise no_such_project(self.app_for(project))
        try:
            result: T = await self._run(fn, scope, *args, **kwargs)
            return result
        except StorageUnavailableError:
            await self._run(self.forget_reader, project)
            raise

    def _open_existing(self, root: Path) -> ProjectStorage | None:
        app = self.app_for(root)
        return app.storage.open_existing_project(app.project_ref(root))

    def forget_reader(self, project: Path) -> None:
        """Drop a cached scope after a storage failure so the next request reopens it."""
        found = self._readers.pop(project.resolve(), None)
        if found is not None:
            found.close()

    async def close(self) -> None:
        """Close every read scope, then every app."""
        for scope in list(self._readers.values()):
            await self._run(scope.close)
        self._readers.clear()
        for app in list(self._apps.values()):
            await self._run(app.close)
        self._apps.clear()
