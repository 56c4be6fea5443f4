"""Conformance harness for the SQLite backend: a fresh ``$LCM_HOME`` in the test's tmp dir."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.contracts import StorageBackendFactory
from lcm_framework.storage.selection import open_backend

NAME = "sqlite"


@contextmanager
def make_factory(tmp_path: Path) -> Iterator[StorageBackendFactory]:
    config = load_config(env={"LCM_HOME": str(tmp_path / "sqlite-home")}, project=tmp_path, plugins=build_plugins())
    factory = open_backend(config, "sqlite", plugins=build_plugins(config.env))
    try:
        yield factory
    finally:
        factory.close()
