"""The restricted runtime role: the reviewed grant script and the start-up ACL check.

``RUNTIME_GRANTS`` is the single source of truth: ``render()`` turns it into
the SQL printed by ``lcm postgres grants --role NAME`` (the reviewed copy
ships as ``reference/runtime-grants.sql``), and ``check()`` compares the
connected role's effective privileges against it. The check applies when the
runtime connects as a role that does not own the managed schema; the owner
(the migration role) is trusted with everything.
"""

from __future__ import annotations

import re
from typing import Any

from lcm_framework.plugin_api import ConfigError, StorageUnavailableError

from .errors import BACKEND

TABLE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

RUNTIME_GRANTS: dict[str, tuple[str, ...]] = {
    "schema_migrations": ("SELECT",),
    "projects": ("SELECT", "INSERT"),
    "machines": ("SELECT", "INSERT"),
    "remote_projects": ("SELECT", "INSERT"),
    "project_bindings": ("SELECT", "INSERT"),
    "conversations": ("SELECT", "INSERT"),
    "messages": ("SELECT", "INSERT", "DELETE"),
    "message_parts": ("SELECT", "INSERT"),
    "summaries": ("SELECT", "INSERT"),
    "summary_messages": ("SELECT", "INSERT"),
    "summary_parents": ("SELECT", "INSERT"),
    "context_items": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "large_files": ("SELECT", "INSERT"),
    "memories": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "recall_stats": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "recall_surfacings": ("SELECT", "INSERT", "DELETE"),
    "redaction_counts": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "session_ingests": ("SELECT", "INSERT", "UPDATE"),
    "leases": ("SELECT", "INSERT", "UPDATE"),
    "native_transcripts": ("SELECT", "INSERT"),
    "ingest_checkpoints": ("SELECT", "INSERT", "UPDATE"),
    "subagent_links": ("SELECT", "INSERT", "UPDATE"),
    "passive_event_streams": ("SELECT", "INSERT", "UPDATE"),
    "passive_event_inbox": ("SELECT", "INSERT", "UPDATE", "DELETE"),
    "passive_event_log": ("SELECT", "INSERT"),
    "passive_session_files": ("SELECT", "INSERT"),
    "passive_co_edits": ("SELECT", "INSERT", "UPDATE"),
    "vector_spaces": ("SELECT", "INSERT", "UPDATE"),
    "message_vectors": ("SELECT", "INSERT", "DELETE"),
    "summary_vectors": ("SELECT", "INSERT", "DELETE"),
}


def render(role: str, schema: str) -> str:
    """The reviewed SQL granting ``role`` exactly what the repositories need (run as the schema owner)."""
    if not ROLE_NAME.match(role):
        raise ConfigError("--role must be a lower-case identifier ([a-z_][a-z0-9_]*)")
    lines = [
        f"-- LCM runtime grants for role {role} on schema {schema}; run as the owner of schema {schema}.",
        "-- The role gets no DDL, TRUNCATE, sequence or grant-option privilege.",
        "BEGIN;",
        f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}";',
    ]
    for table, privileges in RUNTIME_GRANTS.items():
        lines.append(f'GRANT {", ".join(privileges)} ON "{schema}".{table} TO "{role}";')
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n"


def _fail(message: str, code: str) -> StorageUnavailableError:
    return StorageUnavailableError(message, backend=BACKEND, domain="grants", code=code)


def owns_or_absent(cur: Any, schema: str) -> bool:
    """True when the current role owns the schema or it does not exist yet (so this role would create it)."""
    cur.execute("SELECT pg_has_role(current_user, nspowner, 'USAGE') FROM pg_namespace WHERE nspname = %s",
                (schema,))
    row = cur.fetchone()
    return row is None or bool(row[0])


def check(cur: Any, schema: str) -> None:
    """Refuse a runtime role missing a required privilege or holding more than the manifest allows."""
    cur.execute(
        "SELECT has_schema_privilege(current_user, %s, 'USAGE'), has_schema_privilege(current_user, %s, 'CREATE')",
        (schema, schema),
    )
    usage, create = cur.fetchone()
    if not usage:
        raise _fail("the runtime role lacks USAGE on the LCM schema; apply `lcm postgres grants`", "grant_missing")
    if create:
        raise _fail("the runtime role may CREATE in the LCM schema (over-granted)", "grant_excess")
    cur.execute(
        "SELECT c.relname, p.priv, has_table_privilege(current_user, c.oid, p.priv), "
        "has_table_privilege(current_user, c.oid, p.priv || ' WITH GRANT OPTION') "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "CROSS JOIN unnest(%s::text[]) AS p(priv) "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'S')",
        (list(TABLE_PRIVILEGES), schema),
    )
    missing: list[str] = []
    excess: list[str] = []
    seen: set[str] = set()
    for table, privilege, has, grantable in cur.fetchall():
        seen.add(table)
        wanted = privilege in RUNTIME_GRANTS.get(table, ())
        if wanted and not has:
            missing.append(f"{privilege} on {table}")
        elif (has and not wanted) or grantable:
            excess.append(f"{privilege} on {table}")
    missing.extend(f"table {t}" for t in RUNTIME_GRANTS if t not in seen)
    if missing:
        raise _fail(f"the runtime role lacks {', '.join(sorted(missing)[:5])}; apply `lcm postgres grants`",
                    "grant_missing")
    if excess:
        raise _fail(f"the runtime role is over-granted: {', '.join(sorted(excess)[:5])}; revoke it",
                    "grant_excess")


def check_public(cur: Any, schema: str) -> None:
    """PUBLIC holds no CREATE on the schema and no privilege on any managed table."""
    cur.execute(
        "SELECT has_schema_privilege('public', %s, 'CREATE') OR EXISTS (SELECT 1 FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN LATERAL aclexplode(c.relacl) a "
        "WHERE n.nspname = %s AND a.grantee = 0)",
        (schema, schema),
    )
    if cur.fetchone()[0]:
        raise _fail("PUBLIC holds privileges on the LCM schema or its tables; revoke them", "public_grant")
