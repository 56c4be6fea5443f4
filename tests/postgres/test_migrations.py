"""The migration runner: ledger, checksums, ordering, locking, failure atomicity, preconditions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from lcm_postgres import inventory, migrate
from lcm_postgres.migrate import Migration

from lcm_framework.errors import StorageUnavailableError
from tests.conftest import OFFLINE_ENV, REPO

from .support import TestDatabase

pytestmark = pytest.mark.postgres


def ledger(db: TestDatabase, schema: str) -> list[tuple[str, str]]:
    with db.connect() as conn:
        return [(a, b) for a, b in conn.execute(
            f'SELECT migration_id, checksum FROM "{schema}".schema_migrations ORDER BY applied_order')]


def refusal(make_factory: Callable[..., Any]) -> str:
    with pytest.raises(StorageUnavailableError) as info:
        make_factory()
    return info.value.code


def test_empty_then_repeated_runs(db: TestDatabase, schema: str) -> None:
    with db.connect() as conn:
        first = migrate.run(conn, schema)
        again = migrate.run(conn, schema)
    shipped = tuple(m.migration_id for m in migrate.shipped())
    assert shipped[:3] == ("0001_baseline", "0002_english_search", "0003_subagent_links")
    assert first.applied == shipped and first.already_applied == ()
    assert again.applied == () and again.already_applied == shipped
    assert ledger(db, schema) == [(m.migration_id, m.checksum) for m in migrate.shipped()]


def test_shipped_manifest_and_fingerprints_match_a_fresh_migration(db: TestDatabase, schema: str) -> None:
    with db.connect() as conn:
        migrate.run(conn, schema, verify=False)
        with conn.transaction(), conn.cursor() as cur:
            actual = inventory.read_inventory(cur, schema)
    newest = migrate.shipped()[-1].migration_id
    assert actual == inventory.expected_inventories()[newest], "run python -m lcm_postgres.snapshot URL"


def _cli_env(db: TestDatabase) -> dict[str, str]:
    return {**os.environ, **OFFLINE_ENV, "LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_URL": db.url,
            "LCM_POSTGRES_ALLOW_PLAINTEXT": "true", "PYTHONPATH": str(REPO)}


def test_concurrent_runs_in_two_processes_apply_once(db: TestDatabase, schema: str, tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "lcm_framework.cli.main", "-c", f"postgresql.schema={schema}",
           "postgres", "migrate", "--json"]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, env=_cli_env(db), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    reports = [json.loads(out) for out, _ in outputs]
    assert sorted(len(r["applied"]) for r in reports) == [0, len(migrate.shipped())]
    assert [m for m, _ in ledger(db, schema)] == [m.migration_id for m in migrate.shipped()]


def test_a_failed_migration_leaves_nothing_behind(db: TestDatabase, schema: str) -> None:
    good = list(migrate.shipped())
    broken = Migration("9998_broken", "CREATE TABLE half_done (x int); SELECT no_such_function();", "0" * 64)
    with db.connect() as conn:
        migrate.run(conn, schema, migrations=good)
        with pytest.raises(psycopg.Error):
            migrate.run(conn, schema, migrations=[*good, broken])
        exists = conn.execute("SELECT to_regclass(%s)", (f"{schema}.half_done",)).fetchone()[0]
    assert exists is None
    assert [m for m, _ in ledger(db, schema)] == [m.migration_id for m in good]


def test_upgrading_a_baseline_schema_restems_the_stored_rows(db: TestDatabase, schema: str) -> None:
    with db.connect() as conn:
        migrate.run(conn, schema, migrations=[migrate.shipped()[0]])
        conn.execute(f'INSERT INTO "{schema}".conversations (project_id, session_id) VALUES (%s, %s)', ("p", "s"))
        conn.execute(
            f'INSERT INTO "{schema}".messages (project_id, conversation_id, seq, role, content, token_count, '
            f'created_at) SELECT %s, conversation_id, 0, %s, %s, 4, now() FROM "{schema}".conversations',
            ("p", "user", "the webhooks were routed and settled"))
        query = (f"SELECT content_tsv @@ to_tsquery('english', 'route & settle') "
                 f'FROM "{schema}".messages')
        assert conn.execute(query).fetchone() == (False,)  # 'simple': no stemming yet
        report = migrate.run(conn, schema, migrations=migrate.shipped()[:2])
        assert report.applied == ("0002_english_search",)
        assert conn.execute(query).fetchone() == (True,)


def test_a_failed_first_run_leaves_no_schema(db: TestDatabase, schema: str) -> None:
    broken = Migration("0001_baseline", "CREATE TABLE t (x int); SELECT 1/0;", "0" * 64)
    with db.connect() as conn:
        with pytest.raises(psycopg.Error):
            migrate.run(conn, schema, migrations=[broken])
        assert conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone() is None


def test_checksum_drift_is_refused(db: TestDatabase, schema: str, make_factory: Callable[..., Any]) -> None:
    make_factory().close()
    with db.connect() as conn:
        conn.execute(f'UPDATE "{schema}".schema_migrations SET checksum = %s', ("f" * 64,))
    assert refusal(make_factory) == "ledger_checksum_drift"


def test_unknown_history_is_refused(db: TestDatabase, schema: str, make_factory: Callable[..., Any]) -> None:
    make_factory().close()
    with db.connect() as conn:
        conn.execute(f'INSERT INTO "{schema}".schema_migrations (migration_id, checksum, applied_order) '
                     "VALUES ('9999_from_the_future', 'x', 1000)")
    assert refusal(make_factory) == "ledger_unknown"


def test_out_of_order_history_is_refused() -> None:
    first, second = migrate.shipped()[0], Migration("0002_next", "SELECT 1", "a" * 64)
    with pytest.raises(StorageUnavailableError) as info:
        migrate.validate_history([(second.migration_id, second.checksum)], [first, second])
    assert info.value.code == "ledger_out_of_order"
    assert migrate.validate_history([(first.migration_id, first.checksum)], [first, second]) == [second]


def test_a_schema_owned_by_another_role_is_refused(db: TestDatabase, schema: str,
                                                   make_factory: Callable[..., Any]) -> None:
    role = f"lcm_other_{uuid.uuid4().hex[:8]}"
    with db.connect() as conn:
        conn.execute(f'CREATE ROLE "{role}" NOLOGIN')
        try:
            conn.execute(f'CREATE SCHEMA "{schema}" AUTHORIZATION "{role}"')
            with conn.transaction(), conn.cursor() as cur, pytest.raises(StorageUnavailableError) as info:
                migrate.check_schema_owner(cur, schema)
            assert info.value.code == "schema_not_owned"
        finally:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.execute(f'DROP ROLE "{role}"')


def test_public_create_on_the_schema_is_refused(db: TestDatabase, schema: str,
                                                make_factory: Callable[..., Any]) -> None:
    with db.connect() as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'GRANT CREATE ON SCHEMA "{schema}" TO PUBLIC')
    assert refusal(make_factory) == "schema_public_create"


def test_missing_extension_gets_a_remediation_message(db: TestDatabase, tmp_path: Path) -> None:
    name = f"lcm_noext_{uuid.uuid4().hex[:8]}"
    with db.connect() as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
    try:
        url = db.url.rsplit("/", 1)[0] + f"/{name}"
        with pytest.raises(StorageUnavailableError) as info:
            db.factory("lcm", tmp_path, url)
        assert info.value.code == "extension_missing"
        assert "CREATE EXTENSION pg_trgm" in str(info.value)
        with psycopg.connect(url) as conn:  # nothing was created
            assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'lcm'").fetchone()[0] == 0
    finally:
        with db.connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
