"""Shared PostgreSQL test plumbing: the server from LCM_TEST_POSTGRES_URL, throwaway schemas, configs.

Every test gets its own schema (``lcm_t_<random>``) in the shared database, dropped afterwards, so
tests run in parallel without sharing state. Without a reachable server the tests skip, except under
``CI=true`` where that is a failure.
"""

from __future__ import annotations

import atexit
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from lcm_framework.config import Config, load_config
from lcm_framework.daemon_client.files import pid_alive
from lcm_framework.kernel.plugins import build_plugins

URL_ENV = "LCM_TEST_POSTGRES_URL"
_FREE: list[str] = []  # pooled schemas of this process, ready for reuse


def _drop_pooled(url: str) -> None:
    """Drop this process's pooled schemas, and those of test processes that no longer run."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=3) as conn:
            for (schema,) in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lcm_p_%'"):
                pid = int(schema.split("_")[2])
                if pid == os.getpid() or not pid_alive(pid):
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    except psycopg.Error:
        pass


class Unavailable(Exception):
    pass


@cache
def _probe(url: str) -> str | None:
    """None when the server answers (and has pg_trgm, installed here by the test superuser), else why not."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            except psycopg.errors.UniqueViolation:
                pass  # a parallel worker created it at the same moment
        _drop_pooled(url)
        atexit.register(_drop_pooled, url)
    except psycopg.Error as exc:
        return f"PostgreSQL at {URL_ENV} is unreachable ({type(exc).__name__})"
    return None


class TestDatabase:
    """The test server, addressed by an admin (superuser) URL."""

    __test__ = False

    def __init__(self, url: str) -> None:
        self.url = url

    def connect(self, **kwargs: Any) -> Any:
        import psycopg

        return psycopg.connect(self.url, autocommit=True, **kwargs)

    @contextmanager
    def fresh_schema(self) -> Iterator[str]:
        """A schema name nothing else uses; dropped afterwards (the backend migrates it on first open)."""
        schema = f"lcm_t_{uuid.uuid4().hex[:16]}"
        try:
            yield schema
        finally:
            with self.connect() as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    @contextmanager
    def pooled_schema(self) -> Iterator[str]:
        """A migrated, emptied schema reused across tests of this process (DDL per test is slow).

        Only for tests that leave the schema's definition alone (the conformance suite): rows are
        deleted afterwards with triggers off; identities are not reset.
        """
        schema = _FREE.pop() if _FREE else f"lcm_p_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        try:
            yield schema
        except BaseException:
            with self.connect() as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            raise
        with self.connect() as conn, conn.transaction():
            conn.execute("SET LOCAL session_replication_role = replica")
            rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s "
                                "AND tablename <> 'schema_migrations'", (schema,)).fetchall()
            for (table,) in rows:
                conn.execute(f'DELETE FROM "{schema}"."{table}"')
        _FREE.append(schema)

    def config(self, schema: str, tmp_path: Path, url: str | None = None, **overrides: Any) -> Config:
        home = tmp_path / "lcm-home"
        values = {
            "storage.backend": "postgresql",
            "postgresql.url": url or self.url,
            "postgresql.allow_plaintext_loopback": "true",
            "postgresql.schema": schema,
            "postgresql.pool_size": "3",
            "postgresql.acquire_timeout_s": "5",
        }
        values.update({(k if "." in k else f"postgresql.{k}"): str(v) for k, v in overrides.items()})
        return load_config(cwd=tmp_path, env={"LCM_HOME": str(home), "HOME": str(tmp_path)}, overrides=values,
                           plugins=build_plugins())

    def factory(self, schema: str, tmp_path: Path, url: str | None = None, **overrides: Any) -> Any:
        from lcm_postgres.factory import PostgresBackendFactory

        return PostgresBackendFactory(self.config(schema, tmp_path, url, **overrides))


def database_or_unavailable(exc_type: type[Exception] = Unavailable) -> TestDatabase:
    url = os.environ.get(URL_ENV)
    if not url:
        raise exc_type(f"{URL_ENV} is not set")
    problem = _probe(url)
    if problem:
        raise exc_type(problem)
    return TestDatabase(url)


def require_database() -> TestDatabase:
    """The test database, or skip (fail under CI=true)."""
    from tests.conftest import skip_or_fail

    try:
        return database_or_unavailable()
    except Unavailable as exc:
        skip_or_fail(str(exc))
        raise
