"""Plugin registration of the PostgreSQL backend (cheap: no psycopg import here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import CommandSpec, Setting, StorageBackendInfo, hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config
    from lcm_framework.plugin_api.storage import StorageBackendFactory

SETTINGS = (
    Setting("postgresql.url", str, None, "PostgreSQL URL (no query or fragment).", env=("LCM_POSTGRES_URL",),
            secret=True, nullable=True),
    Setting("postgresql.ca_file", str, None, "CA bundle used to verify the server.", env=("LCM_POSTGRES_CA_FILE",),
            nullable=True),
    Setting("postgresql.allow_plaintext_loopback", bool, False,
            "Allow an unencrypted connection, only to a loopback address or a Unix socket.",
            env=("LCM_POSTGRES_ALLOW_PLAINTEXT",)),
    Setting("postgresql.pool_size", int, 5, "Maximum pooled connections.", minimum=1, maximum=100),
    Setting("postgresql.acquire_timeout_s", float, 10.0, "Seconds to wait for a pooled connection.", minimum=0.1),
    Setting("postgresql.idle_timeout_s", float, 300.0, "Seconds before an idle connection is closed.", minimum=1),
    Setting("postgresql.statement_timeout_ms", int, 30_000, "Server statement timeout.", minimum=100),
    Setting("postgresql.idle_in_transaction_timeout_ms", int, 60_000, "Server idle-in-transaction timeout.",
            minimum=100),
    Setting("postgresql.schema", str, "lcm", "Schema that holds LCM's tables."),
)


@hookimpl
def lcm_register_settings(register: Callable[[Setting], None]) -> None:
    for setting in SETTINGS:
        register(setting)


def factory(config: Config) -> StorageBackendFactory:
    from .factory import PostgresBackendFactory

    return PostgresBackendFactory(config)


@hookimpl
def lcm_register_storage_backends(register: Callable[[StorageBackendInfo], None]) -> None:
    register(StorageBackendInfo(
        "postgresql",
        "PostgreSQL 15+: one shared memory for several machines (verified TLS, migration ledger, "
        "restricted runtime role, distributed leases)",
        factory,
    ))


@hookimpl
def lcm_register_commands(register: Callable[[CommandSpec], None]) -> None:
    from . import commands

    for spec in commands.COMMANDS:
        register(spec)
