"""``PostgresBackendFactory``: the ``postgresql`` storage backend (registered in ``plugin.py``).

Construction is eager and fails closed: the settings are checked (URL and
TLS policy), the pool is opened, and the schema is made ready. Connected as
the owner of the managed schema (or when it does not exist yet), pending
migrations are applied; otherwise (a restricted runtime role) the ledger
must be complete, and the role's privileges must match the reviewed grants
exactly. Either way the schema is verified against the fingerprint of the
newest applied migration. Selecting PostgreSQL never falls back to SQLite.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import StorageClosedError, StorageError, StorageUnavailableError
from lcm_framework.plugin_api.storage import (
    Capabilities,
    CoordinationScope,
    FullTextTier,
    Health,
    ProjectRef,
    Validator,
)

from . import grants, identity, inventory, migrate
from .errors import BACKEND
from .project import PostgresProjectStorage
from .runtime import Runtime
from .settings import load_settings

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Config

_INTEGRITY_TABLES = ("conversations", "messages", "message_parts", "native_transcripts", "summaries",
                     "summary_messages", "summary_parents", "context_items", "large_files", "memories",
                     "recall_stats", "recall_surfacings", "redaction_counts", "session_ingests",
                     "ingest_checkpoints", "leases", "subagent_links", "passive_event_inbox",
                     "passive_event_log", "passive_session_files", "passive_co_edits")
CAPABILITIES = Capabilities(
    backend=BACKEND,
    transactions=True,
    lexical_search=True,
    regex_search=True,
    full_text_search=True,
    full_text_tier=FullTextTier.POSTGRES,
    coordination=CoordinationScope.DISTRIBUTED,
    passive_inbox=True,
)


def verify_ready(cur: Any, schema: str, *, owner: bool) -> str:
    """Check a migrated schema without changing it: complete ledger, fingerprint, ACLs (grants when not owner).

    Returns the newest applied migration id.
    """
    migrate.check_extensions(cur)
    grants.check_public(cur, schema)
    if not owner:  # catalog-only checks first: a role without USAGE cannot even read the ledger
        grants.check(cur, schema)
    applied = migrate.read_ledger(cur, schema)
    if not applied or migrate.validate_history(applied):
        raise StorageUnavailableError(
            "the LCM schema has pending migrations; run `lcm postgres migrate` as the schema owner",
            backend=BACKEND, domain="migrations", code="migrations_pending")
    inventory.verify(cur, schema, applied[-1][0])
    return applied[-1][0]


def ensure_ready(runtime: Runtime, schema: str) -> str:
    """Migrate (as owner) or verify (as runtime role) the managed schema; returns ``owner`` or ``runtime``."""
    with runtime.connection("schema") as conn:
        with conn.transaction(), conn.cursor() as cur:
            owner = grants.owns_or_absent(cur, schema)
        if owner:
            migrate.run(conn, schema)  # verifies the schema fingerprint itself
        with conn.transaction(), conn.cursor() as cur:
            if owner:
                grants.check_public(cur, schema)
            else:
                verify_ready(cur, schema, owner=False)
        return "owner" if owner else "runtime"


class PostgresBackendFactory:
    name = BACKEND
    capabilities = CAPABILITIES

    def __init__(self, config: Config) -> None:
        self._settings = load_settings(config)
        self._runtime = Runtime(self._settings)
        self._lock = threading.Lock()
        self._open: set[PostgresProjectStorage] = set()
        self._closed = False
        try:
            self.role = ensure_ready(self._runtime, self._settings.schema)
        except BaseException:
            self._runtime.close()
            raise

    @property
    def runtime(self) -> Runtime:
        return self._runtime

    def open_project(self, project: ProjectRef) -> PostgresProjectStorage:
        found = self._open_project(project, create=True)
        assert found is not None
        return found

    def open_existing_project(self, project: ProjectRef) -> PostgresProjectStorage | None:
        """The project when its ``projects`` row exists; no row is added otherwise."""
        return self._open_project(project, create=False)

    def _open_project(self, project: ProjectRef, *, create: bool) -> PostgresProjectStorage | None:
        check = Validator(BACKEND, "project", project.project_id)
        check.text("project_id", project.project_id)
        check.text("root", project.root)
        if self._closed:
            raise StorageClosedError("the PostgreSQL backend is closed", backend=BACKEND, domain="factory",
                                          code="closed")
        with self._runtime.connection("project", project.project_id) as conn, conn.transaction(), \
                conn.cursor() as cur:
            key = identity.resolve_project_key(cur, self._settings.home, project.root, project.project_id)
            if create:
                cur.execute("INSERT INTO projects (project_id, root) VALUES (%s, %s) "
                            "ON CONFLICT (project_id) DO NOTHING", (key, project.root))
            else:
                cur.execute("SELECT 1 FROM projects WHERE project_id = %s", (key,))
                if cur.fetchone() is None:
                    return None
        storage = PostgresProjectStorage(self._runtime, key, CAPABILITIES, self._forget)
        with self._lock:
            self._open.add(storage)
        return storage

    def _forget(self, storage: PostgresProjectStorage) -> None:
        with self._lock:
            self._open.discard(storage)

    def list_projects(self) -> list[ProjectRef]:
        with self._runtime.connection("factory") as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT project_id, root FROM projects ORDER BY created_at, project_id")
            return [ProjectRef(project_id=p, root=r) for p, r in cur.fetchall()]

    def check_integrity(self) -> list[Health]:
        """Every project's rows of each table read back in one snapshot.

        PostgreSQL guards its own pages (WAL, data checksums where enabled); reading every row makes a
        damaged page or TOAST chunk surface here as an error instead of during a hook.
        """
        if self._closed:
            raise StorageClosedError("the storage backend is closed", backend=BACKEND, domain="factory",
                                     code="closed")
        results = []
        for ref in self.list_projects():
            try:
                with self._runtime.connection("integrity", ref.project_id) as conn, conn.transaction(), \
                        conn.cursor() as cur:
                    for table in _INTEGRITY_TABLES:
                        cur.execute(f"SELECT count(*), sum(length(t::text)) FROM {table} t "
                                    "WHERE project_id = %(p)s", {"p": ref.project_id})
            except StorageError as exc:
                state = "corrupt" if exc.code == "corrupt" else "unavailable"
                results.append(Health(BACKEND, ok=False, state=state, project=ref.project_id, domain="integrity",
                                      detail=f"a table could not be read back ({exc.code})"))
                continue
            results.append(Health(BACKEND, ok=True, state="ok", project=ref.project_id, domain="integrity",
                                  detail=f"{len(_INTEGRITY_TABLES)} tables read back"))
        return results

    def health(self) -> Health:
        if self._closed:
            return Health(BACKEND, ok=False, state="closed", domain="factory")
        try:
            with self._runtime.connection("factory") as conn:
                conn.execute("SELECT 1")
        except StorageUnavailableError as exc:
            return Health(BACKEND, ok=False, state="unavailable", domain="factory", detail=exc.code)
        with self._lock:
            count = len(self._open)
        return Health(BACKEND, ok=True, state="ok", domain="factory",
                      detail=f"role {self.role}; {count} open project(s)")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            still_open = list(self._open)
        for storage in still_open:
            storage.close()
        self._runtime.close()
