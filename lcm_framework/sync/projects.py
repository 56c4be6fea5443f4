"""Project storage and scrubbers for the drain worker, one ``App`` per project root (each with its own
configuration file), write scopes kept open for the worker's life."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage


class AppProjects:
    """``ProjectAccess`` over ``app_for(root)``; ``extra_roots`` lists roots to apply events for although
    this machine's outbox names none of them (the daemon's served projects)."""

    def __init__(self, app_for: Callable[[Path], App], extra_roots: Callable[[], Sequence[str]] = tuple) -> None:
        self._app_for = app_for
        self._extra = extra_roots
        self._open: dict[str, ProjectStorage] = {}

    def storage(self, root: str) -> ProjectStorage:
        found = self._open.get(root)
        if found is None:
            app = self._app_for(Path(root))
            found = self._open[root] = app.storage.open_project(app.project_ref(Path(root)))
        return found

    def existing(self, root: str) -> ProjectStorage | None:
        found = self._open.get(root)
        if found is None:
            app = self._app_for(Path(root))
            opened = app.storage.open_existing_project(app.project_ref(Path(root)))
            if opened is None:
                return None
            found = self._open[root] = opened
        return found

    def scrub(self, root: str, text: str) -> str:
        from ..scrub.gate import project_scrubber

        return project_scrubber(self._app_for(Path(root))).scrub_text(text)[0]

    def roots(self) -> Sequence[str]:
        return list(self._extra())

    def forget(self, root: str) -> None:
        found = self._open.pop(root, None)
        if found is not None:
            found.close()

    def close(self) -> None:
        for root in list(self._open):
            self.forget(root)


class StandaloneApps:
    """Apps by project root for a command (``lcm sync``): each root's own configuration applies; the
    command's own ``app`` serves its project root (it is not closed here)."""

    def __init__(self, app: App, overrides: Mapping[str, Any] | None = None) -> None:
        self._config = app.config
        self._plugins = app.plugins
        self._seed = app
        self._overrides = dict(overrides or {})
        self._apps: dict[Path, App] = {}

    def app_for(self, root: Path) -> App:
        from ..app import App
        from ..config import load_config

        key = root.resolve()
        if key == self._seed.config.project_root.resolve():
            return self._seed
        if key not in self._apps:
            config = load_config(project=key, env=self._config.env, overrides=self._overrides, plugins=self._plugins)
            self._apps[key] = App(config, self._plugins)
        return self._apps[key]

    def close(self) -> None:
        for app in self._apps.values():
            app.close()
        self._apps.clear()
