"""Checksummed, ledgered, advisory-locked schema migrations.

Ordered SQL files ship in ``migrations/`` with a SHA-256 manifest. One run
takes a transaction-scoped advisory lock, checks the required extension and
the schema's ownership and ACL, validates the ledger
(``<schema>.schema_migrations``) against the shipped list (unknown,
out-of-order or checksum-drifted history is refused), verifies the current
schema against the newest applied migration's fingerprint, applies pending
files together with their ledger rows, verifies the result and commits once:
empty, repeated, concurrent and failed runs are deterministic.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from lcm_framework.plugin_api import StorageError, StorageUnavailableError

from . import inventory
from .errors import BACKEND

REQUIRED_EXTENSIONS = ("pg_trgm",)
LEDGER = "schema_migrations"
LOCK_NAMESPACE = 0x4C434D  # "LCM": first key of the migration advisory lock


@dataclass(frozen=True, slots=True)
class Migration:
    migration_id: str
    sql: str
    checksum: str


@dataclass(frozen=True, slots=True)
class MigrationReport:
    schema: str
    applied: tuple[str, ...] = ()
    already_applied: tuple[str, ...] = ()
    current: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def _fail(message: str, code: str, exc: type[StorageError] = StorageUnavailableError) -> StorageError:
    return exc(message, backend=BACKEND, domain="migrations", code=code)


@cache
def shipped() -> tuple[Migration, ...]:
    """The packaged migrations, each checked against the manifest."""
    root = resources.files(__package__).joinpath("migrations")
    manifest: dict[str, str] = json.loads(root.joinpath("manifest.json").read_text("utf-8"))
    files = sorted(p.name for p in root.iterdir() if p.name.endswith(".sql"))
    if sorted(manifest) != files:
        raise _fail("the packaged migration files do not match their manifest", "manifest_mismatch")
    out = []
    for name in files:
        data = root.joinpath(name).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != manifest[name]:
            raise _fail(f"migration {name} does not match its manifest checksum", "manifest_checksum")
        out.append(Migration(name.removesuffix(".sql"), data.decode("utf-8"), digest))
    return tuple(out)


def lock_key(schema: str) -> int:
    return int.from_bytes(hashlib.sha256(f"lcm-migrate:{schema}".encode()).digest()[:4], "big", signed=True)


def check_extensions(cur: Any) -> None:
    cur.execute("SELECT extname FROM pg_extension WHERE extname = ANY(%s)", (list(REQUIRED_EXTENSIONS),))
    present = {row[0] for row in cur.fetchall()}
    missing = [name for name in REQUIRED_EXTENSIONS if name not in present]
    if missing:
        raise _fail(
            f"required PostgreSQL extension(s) {', '.join(missing)} not installed; LCM never creates "
            f"extensions: ask a database administrator to run "
            + "; ".join(f"CREATE EXTENSION {name}" for name in missing)
            + " in this database, then retry",
            "extension_missing",
        )


def check_schema_owner(cur: Any, schema: str) -> bool:
    """True when the schema exists (and is owned by us, without PUBLIC CREATE); refuses otherwise."""
    cur.execute(
        "SELECT nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user), "
        "has_schema_privilege('public', oid, 'CREATE') FROM pg_namespace WHERE nspname = %s",
        (schema,),
    )
    row = cur.fetchone()
    if row is None:
        return False
    owned, public_create = row
    if not owned:
        raise _fail("the migration role must own the LCM schema (ownership is never changed automatically)",
                    "schema_not_owned")
    if public_create:
        raise _fail("PUBLIC has CREATE on the LCM schema; revoke it before migrating", "schema_public_create")
    return True


def read_ledger(cur: Any, schema: str) -> list[tuple[str, str]] | None:
    """Applied (id, checksum) rows in order, or None when there is no ledger yet."""
    cur.execute(
        "SELECT c.relkind, c.relowner = n.nspowner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s",
        (schema, LEDGER),
    )
    row = cur.fetchone()
    if row is None:
        return None
    if row[0] != "r" or not row[1]:
        raise _fail("the migration ledger is not an ordinary table owned by the schema owner", "ledger_invalid")
    cur.execute(f'SELECT migration_id, checksum FROM "{schema}".{LEDGER} ORDER BY applied_order')
    return [(str(a), str(b)) for a, b in cur.fetchall()]


def validate_history(applied: list[tuple[str, str]],
                     known: Sequence[Migration] | None = None) -> list[Migration]:
    """The pending migrations; refuses unknown, out-of-order or checksum-drifted history."""
    known = shipped() if known is None else known
    by_id = {m.migration_id: m for m in known}
    for position, (migration_id, checksum) in enumerate(applied):
        if migration_id not in by_id:
            raise _fail(f"the ledger holds an unknown migration {migration_id!r} (newer LCM?)",
                        "ledger_unknown")
        if position >= len(known) or known[position].migration_id != migration_id:
            raise _fail(f"the ledger applies {migration_id!r} out of order", "ledger_out_of_order")
        if by_id[migration_id].checksum != checksum:
            raise _fail(f"migration {migration_id!r} was applied with a different checksum",
                        "ledger_checksum_drift")
    return list(known[len(applied):])


def run(conn: Any, schema: str, *, verify: bool = True,
        migrations: Sequence[Migration] | None = None) -> MigrationReport:
    """Migrate ``schema`` to the newest of ``migrations`` (default: the shipped ones) on ``conn``.

    ``conn`` is an autocommit connection. ``verify=False`` is only for regenerating the shipped
    fingerprints (``snapshot``).
    """
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SET LOCAL quote_all_identifiers = off")
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_NAMESPACE, lock_key(schema)))
        check_extensions(cur)
        if not check_schema_owner(cur, schema):
            cur.execute(f'CREATE SCHEMA "{schema}"')
        applied = read_ledger(cur, schema)
        if applied is None:
            cur.execute(
                f'CREATE TABLE "{schema}".{LEDGER} (migration_id text PRIMARY KEY, checksum text NOT NULL, '
                "applied_order integer NOT NULL UNIQUE, applied_at timestamptz NOT NULL DEFAULT clock_timestamp(), "
                "applied_by text NOT NULL DEFAULT current_user)"
            )
            applied = []
        pending = validate_history(applied, migrations)
        if applied and verify:
            inventory.verify(cur, schema, applied[-1][0])
        cur.execute("SELECT set_config('search_path', %s, true)", (f"{schema}, public",))
        for position, migration in enumerate(pending, start=len(applied)):
            cur.execute(migration.sql.encode())
            cur.execute(
                f'INSERT INTO "{schema}".{LEDGER} (migration_id, checksum, applied_order) VALUES (%s, %s, %s)',
                (migration.migration_id, migration.checksum, position),
            )
        current = pending[-1].migration_id if pending else (applied[-1][0] if applied else None)
        if pending and current is not None and verify:
            inventory.verify(cur, schema, current)
        return MigrationReport(schema, tuple(m.migration_id for m in pending),
                               tuple(a for a, _ in applied), current)
