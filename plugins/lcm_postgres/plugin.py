"""Plugin registration of the PostgreSQL backend (cheap: no psycopg import here)."""

from __future__ import annotations

from collections.abc import Callable

from lcm_framework.plugin_api import CommandSpec, StorageBackendInfo, hookimpl


@hookimpl
def lcm_register_storage_backends(register: Callable[[StorageBackendInfo], None]) -> None:
    register(StorageBackendInfo(
        "postgresql",
        "PostgreSQL 15+: one shared memory for several machines (verified TLS, migration ledger, "
        "restricted runtime role, distributed leases)",
        settings_prefix="postgresql.",
    ))


@hookimpl
def lcm_register_commands(register: Callable[[CommandSpec], None]) -> None:
    from . import commands

    for spec in commands.COMMANDS:
        register(spec)
