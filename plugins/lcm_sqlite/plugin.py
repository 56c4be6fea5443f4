"""Plugin entry point: describes the ``sqlite`` storage backend (cheap to import)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import Setting, StorageBackendInfo, hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.storage import StorageBackendFactory

SETTINGS = (
    Setting("storage.busy_timeout_ms", int, 5000, "SQLite busy timeout.", minimum=0, maximum=600_000),
    Setting("storage.fts_tier", str, "auto", "SQLite full-text tier.", choices=("auto", "fts5", "fts4", "like")),
)


@hookimpl
def lcm_register_settings(register: Callable[[Setting], None]) -> None:
    for setting in SETTINGS:
        register(setting)


def factory(config: Config) -> StorageBackendFactory:
    from .factory import SqliteBackendFactory

    return SqliteBackendFactory(config)


@hookimpl
def lcm_register_storage_backends(register: Callable[[StorageBackendInfo], None]) -> None:
    register(StorageBackendInfo(
        "sqlite",
        "Embedded default: one SQLite database per project under $LCM_HOME/projects (WAL, FTS5/FTS4/LIKE).",
        factory,
    ))
