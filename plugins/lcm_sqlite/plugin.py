"""Plugin entry point: describes the ``sqlite`` storage backend (cheap to import)."""

from __future__ import annotations

from collections.abc import Callable

from lcm_framework.plugin_api import StorageBackendInfo, hookimpl


@hookimpl
def lcm_register_storage_backends(register: Callable[[StorageBackendInfo], None]) -> None:
    register(
        StorageBackendInfo(
            "sqlite",
            "Embedded default: one SQLite database per project under $LCM_HOME/projects (WAL, FTS5/FTS4/LIKE).",
            settings_prefix="storage.",
        )
    )
