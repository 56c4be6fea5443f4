"""Helpers for the SQLite-specific tests: a factory over the test's own ``$LCM_HOME``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lcm_sqlite.factory import SqliteBackendFactory

from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.checked import storage_driver
from lcm_framework.storage.contracts import StorageBackendFactory
from lcm_framework.storage.models import ProjectRef
from lcm_framework.storage.selection import open_backend

MakeFactory = Callable[..., StorageBackendFactory]


def ref(name: str = "proj") -> ProjectRef:
    return ProjectRef(hashlib.sha256(name.encode()).hexdigest(), f"/code/{name}")


@pytest.fixture
def make_factory(tmp_path: Path) -> Iterator[MakeFactory]:
    """Build factories over ``tmp_path/home`` with optional config overrides; all closed at teardown."""
    made: list[StorageBackendFactory] = []

    def build(**overrides: Any) -> StorageBackendFactory:
        config = load_config(env={"LCM_HOME": str(tmp_path / "home")}, project=tmp_path, overrides=overrides,
                             plugins=build_plugins())
        factory = open_backend(config, "sqlite", plugins=build_plugins(config.env))
        assert isinstance(storage_driver(factory), SqliteBackendFactory)
        made.append(factory)
        return factory

    yield build
    for factory in made:
        factory.close()


def db_path(tmp_path: Path, project: ProjectRef) -> Path:
    return tmp_path / "home" / "projects" / project.project_id / "lcm.db"
