"""The managed-schema inventory: what the migrations must have produced, read from the catalogs.

An inventory is a sorted list of one-line descriptions (tables with their
persistence, row security and ownership; columns; indexes; constraints;
identity sequences). Definitions are deparsed with ``search_path`` pinned to
the managed schema so they are independent of the schema's name. The
package ships the expected inventory of every migration in
``migrations/fingerprints.json``; a difference is schema drift.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from lcm_framework.plugin_api import StorageUnavailableError

from .errors import BACKEND

_TABLES = """
SELECT c.relname, c.relpersistence, c.relrowsecurity, c.relforcerowsecurity, c.relowner = n.nspowner,
       c.relispartition, EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid OR i.inhparent = c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind IN ('r', 'p')
"""
_COLUMNS = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
       a.attgenerated, coalesce(pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
"""
_INDEXES = """
SELECT t.relname, i.relname, pg_get_indexdef(x.indexrelid), x.indisvalid AND x.indisready AND x.indislive,
       i.relowner = t.relowner
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = %s
"""
_CONSTRAINTS = """
SELECT t.relname, k.conname, k.contype, pg_get_constraintdef(k.oid), k.convalidated, k.condeferrable,
       k.condeferred
FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = %s OR k.confrelid IN (
    SELECT c.oid FROM pg_class c JOIN pg_namespace m ON m.oid = c.relnamespace WHERE m.nspname = %s)
"""
_TRIGGERS = """
SELECT t.relname, g.tgname FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid
JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = %s AND NOT g.tgisinternal
"""
_SEQUENCES = """
SELECT s.relname, s.relowner = n.nspowner, s.relpersistence
FROM pg_class s JOIN pg_namespace n ON n.oid = s.relnamespace WHERE n.nspname = %s AND s.relkind = 'S'
"""


def read_inventory(cur: Any, schema: str, *, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Describe the managed schema; call inside a transaction (search_path is pinned locally)."""
    cur.execute("SELECT set_config('search_path', %s, true)", (f"{schema}, public",))
    lines: list[str] = []
    cur.execute(_TABLES, (schema,))
    for name, persistence, rls, force_rls, owned, part, inherits in cur.fetchall():
        if name in exclude:
            continue
        lines.append(f"table {name} persistence={persistence} rls={rls}/{force_rls} owned={owned} "
                     f"partition={part} inherits={inherits}")
    cur.execute(_COLUMNS, (schema,))
    for table, col, typ, notnull, identity, generated, default in cur.fetchall():
        if table in exclude:
            continue
        lines.append(f"column {table}.{col} {typ} notnull={notnull} identity={identity or '-'} "
                     f"generated={generated or '-'} default={default}")
    cur.execute(_INDEXES, (schema,))
    for table, name, definition, live, owned in cur.fetchall():
        if table in exclude:
            continue
        definition = definition.replace(f" {schema}.", " ").replace(f' "{schema}".', " ")
        lines.append(f"index {table}.{name} live={live} owned={owned} {definition}")
    cur.execute(_CONSTRAINTS, (schema, schema))
    for table, name, kind, definition, valid, deferrable, deferred in cur.fetchall():
        if table in exclude:
            continue
        lines.append(f"constraint {table}.{name} {kind} valid={valid} deferrable={deferrable}/{deferred} "
                     f"{definition}")
    cur.execute(_TRIGGERS, (schema,))
    lines.extend(f"trigger {table}.{name}" for table, name in cur.fetchall() if table not in exclude)
    cur.execute(_SEQUENCES, (schema,))
    lines.extend(f"sequence {name} owned={owned} persistence={persistence}"
                 for name, owned, persistence in cur.fetchall())
    return sorted(lines)


def fingerprint(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@cache
def expected_inventories() -> dict[str, list[str]]:
    text = resources.files(__package__).joinpath("migrations", "fingerprints.json").read_text("utf-8")
    data: dict[str, list[str]] = json.loads(text)
    return data


@dataclass(frozen=True, slots=True)
class Drift:
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]

    def describe(self, limit: int = 5) -> str:
        """Object kinds and names only (no definitions): safe to show."""
        def names(lines: tuple[str, ...]) -> str:
            shown = [" ".join(line.split()[:2]) for line in lines[:limit]]
            more = f" (+{len(lines) - limit} more)" if len(lines) > limit else ""
            return ", ".join(shown) + more
        parts = []
        if self.missing:
            parts.append(f"missing or changed: {names(self.missing)}")
        if self.unexpected:
            parts.append(f"unexpected or changed: {names(self.unexpected)}")
        return "; ".join(parts)


def compare(actual: list[str], expected: list[str]) -> Drift | None:
    have, want = set(actual), set(expected)
    if have == want:
        return None
    return Drift(tuple(sorted(want - have)), tuple(sorted(have - want)))


def verify(cur: Any, schema: str, migration_id: str, *, project: str | None = None) -> None:
    """Fail closed (StorageUnavailableError, code ``schema_drift``) unless the schema matches."""
    expected = expected_inventories().get(migration_id)
    if expected is None:
        raise StorageUnavailableError(
            f"no schema fingerprint is shipped for migration {migration_id}",
            backend=BACKEND, domain="schema", project=project, code="schema_fingerprint_missing")
    drift = compare(read_inventory(cur, schema), expected)
    if drift is not None:
        raise StorageUnavailableError(
            f"the managed PostgreSQL schema drifted from migration {migration_id}: {drift.describe()}",
            backend=BACKEND, domain="schema", project=project, code="schema_drift")
