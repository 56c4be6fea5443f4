"""The projects the explorer reads: refs by id, one storage scope kept open per project, one ``App`` per root
(its own configuration file applies, as in the daemon)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..operations.browse import BrowseNotFoundError

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..storage.models import ProjectRef, StorageUsage

PROJECT_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
USAGE_TTL_S = 60.0
"""How long a project's storage figures are reused: reading them walks the database's page map."""


class Scopes:
    def __init__(self, app: App) -> None:
        self.app = app
        self._refs: dict[str, ProjectRef] = {}
        self._open: dict[str, ProjectStorage] = {}
        self._apps: dict[str, App] = {}
        self._usage: dict[str, tuple[float, StorageUsage]] = {}
        self._lock = threading.Lock()

    def ref(self, project_id: str) -> ProjectRef:
        """The project with this id; ``BrowseNotFoundError`` for an id the backend does not hold."""
        if not PROJECT_ID.fullmatch(project_id):
            raise BrowseNotFoundError("no such project")
        found = self._refs.get(project_id)
        if found is None:
            self._refs = {r.project_id: r for r in self.app.storage.list_projects()}
            found = self._refs.get(project_id)
        if found is None:
            raise BrowseNotFoundError("no such project")
        return found

    def storage(self, project_id: str) -> ProjectStorage:
        """The project's scope, opened once and kept (a read never creates a project)."""
        with self._lock:
            found = self._open.get(project_id)
            if found is None:
                opened = self.app.storage.open_existing_project(self.ref(project_id))
                if opened is None:
                    raise BrowseNotFoundError("no such project")
                found = self._open[project_id] = opened
            return found

    def usage(self, project_id: str) -> StorageUsage:
        """``storage_usage(payloads=False)`` of the project, read at most once per ``USAGE_TTL_S``."""
        found = self._usage.get(project_id)
        if found is None or time.monotonic() - found[0] > USAGE_TTL_S:
            found = self._usage[project_id] = (time.monotonic(),
                                               self.storage(project_id).storage_usage(payloads=False))
        return found[1]

    def app_for(self, project_id: str) -> App:
        """The ``App`` of the project's root: that project's configuration file, this process's ``-c`` flags."""
        from ..app import App
        from ..config import load_config

        with self._lock:
            found = self._apps.get(project_id)
            if found is None:
                root = Path(self.ref(project_id).root)
                config = load_config(project=root, env=self.app.config.env, overrides=self.app.config.flags,
                                     plugins=self.app.plugins)  # the command line's -c reaches every project
                found = self._apps[project_id] = App(config, self.app.plugins)
            return found

    def forget(self, project_id: str) -> None:
        """Drop a scope after a storage outage so the next request reopens it."""
        with self._lock:
            found = self._open.pop(project_id, None)
        if found is not None:
            found.close()

    def close(self) -> None:
        with self._lock:
            opened, apps = list(self._open.values()), list(self._apps.values())
            self._open.clear()
            self._apps.clear()
        for storage in opened:
            storage.close()
        for app in apps:
            app.close()
