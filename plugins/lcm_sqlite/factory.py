"""``SqliteBackendFactory``: the ``sqlite`` storage backend (registered in ``plugin.py``).

Each project lives in ``$LCM_HOME/projects/<project_id>/lcm.db`` (directories
0700, files 0600). Every ``open_project`` gets its own connection, so closing
one scope never affects another.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from pathlib import Path

from lcm_framework.plugin_api import DataValidationError, StorageError, StorageUnavailableError, ensure_private_dir
from lcm_framework.plugin_api.app import Config
from lcm_framework.plugin_api.sqlite import quick_check
from lcm_framework.plugin_api.storage import Capabilities, CoordinationScope, FullTextTier, Health, ProjectRef

from . import fts, schema
from .connection import Database, connect
from .errors import BACKEND, closed, translate
from .project import SqliteProjectStorage
from .scope import Scope
from .search import regex_available, regexp

DB_NAME = "lcm.db"
_PROJECT_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


class SqliteBackendFactory:
    name = BACKEND

    def __init__(self, config: Config) -> None:
        self._home = Path(config.home)
        self._busy_ms = int(config.get("storage.busy_timeout_ms"))
        self._tier = fts.resolve(str(config.get("storage.fts_tier")))
        self._regex = regex_available()
        self.capabilities = Capabilities(
            backend=BACKEND, transactions=True, lexical_search=True, regex_search=self._regex,
            full_text_search=self._tier is not FullTextTier.LIKE, full_text_tier=self._tier,
            coordination=CoordinationScope.LOCAL)
        self._lock = threading.Lock()
        self._open: set[SqliteProjectStorage] = set()
        self._closed = False

    @property
    def _projects(self) -> Path:
        return self._home / "projects"

    def open_project(self, project: ProjectRef) -> SqliteProjectStorage:
        self._validate(project)
        if self._closed:
            raise closed("project", project.project_id)
        try:
            for parent in (self._home, self._projects):
                ensure_private_dir(parent, home=self._home)
            directory = ensure_private_dir(self._projects / project.project_id, home=self._home)
        except OSError:
            raise StorageUnavailableError("the project directory cannot be created", backend=BACKEND,
                                          domain="project", project=project.project_id, code="io_error") from None
        path = directory / DB_NAME
        conn = connect(path, self._busy_ms, domain="project", project=project.project_id)
        try:
            if self._regex:
                conn.create_function("regexp", 2, regexp, deterministic=True)
            fts.register_functions(conn, self._tier)
        except sqlite3.Error as exc:
            conn.close()
            raise translate(exc, "project", project.project_id) from None
        db = Database(conn, project.project_id, self._busy_ms)
        try:
            db.run(lambda c: schema.prepare(c, project, self._tier), "schema")
        except BaseException:
            db.close()
            raise
        storage = SqliteProjectStorage(Scope(db, self._tier, self._regex), self.capabilities, path,
                                       self._forget)
        with self._lock:
            if self._closed:
                db.close()
                raise closed("project", project.project_id)
            self._open.add(storage)
        return storage

    def open_existing_project(self, project: ProjectRef) -> SqliteProjectStorage | None:
        """The project when its database file exists; nothing is created otherwise."""
        self._validate(project)
        if not (self._projects / project.project_id / DB_NAME).is_file():
            return None
        return self.open_project(project)

    def _validate(self, project: ProjectRef) -> None:
        if not isinstance(project.project_id, str) or not _PROJECT_ID.match(project.project_id):
            raise DataValidationError("project_id must be 1-128 letters, digits, '-' or '_'", backend=BACKEND,
                                      domain="project", code="invalid_project_id")
        if not isinstance(project.root, str) or "\x00" in project.root:
            raise DataValidationError("project root must be text without U+0000", backend=BACKEND,
                                      domain="project", project=project.project_id, code="nul_character")

    def _forget(self, storage: SqliteProjectStorage) -> None:
        with self._lock:
            self._open.discard(storage)

    def list_projects(self) -> list[ProjectRef]:
        """Every project database under ``$LCM_HOME/projects`` that records its ProjectRef (by root)."""
        if self._closed:
            raise closed("project", None)
        found: list[ProjectRef] = []
        if not self._projects.is_dir():
            return found
        for directory in sorted(self._projects.iterdir()):
            path = directory / DB_NAME
            if not path.is_file():
                continue
            try:
                conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=self._busy_ms / 1000)
                try:
                    ref = schema.read_project(conn)
                finally:
                    conn.close()
            except sqlite3.Error:
                continue
            if ref is not None:
                found.append(ref)
        return sorted(found, key=lambda r: (r.root, r.project_id))

    def check_integrity(self) -> list[Health]:
        """``PRAGMA quick_check`` on every project database under the home, readable or not."""
        if self._closed:
            raise closed("project", None)
        if not self._projects.is_dir():
            return []
        return [self._quick_check(directory.name, directory / DB_NAME)
                for directory in sorted(self._projects.iterdir()) if (directory / DB_NAME).is_file()]

    def _quick_check(self, project_id: str, path: Path) -> Health:
        state, detail = quick_check(path, self._busy_ms / 1000)
        return Health(BACKEND, ok=state == "ok", state=state, project=project_id, domain="integrity",
                      detail=f"{detail} ({path})")

    def health(self) -> Health:
        if self._closed:
            return Health(BACKEND, ok=False, state="closed", domain="factory")
        if not _writable(self._projects):
            return Health(BACKEND, ok=False, state="unavailable", domain="factory", detail="home not writable")
        return Health(BACKEND, ok=True, state="ok", domain="factory",
                      detail=f"full-text tier {self._tier.value}; {len(self._open)} open project(s)")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            still_open, self._open = list(self._open), set()
        for storage in still_open:
            try:
                storage.close()
            except StorageError:
                pass


def _writable(path: Path) -> bool:
    """Whether ``path`` exists as a writable directory or could be created (checked without creating it)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)
