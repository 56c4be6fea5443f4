"""Session-ingest records and fenced leases timed by the database clock.

A lease row per (project, name) keeps its fence forever: every new grant
(first grant, takeover of an expired lease, grant after release) increments
it, so a stale holder's final write fails ``check_fence``. Expiry is judged
by ``clock_timestamp()`` on the server, never by a machine's own clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import Lease, SessionIngestRecord

from .base import Repository, utc, utc_required


class PgCoordination(Repository):
    domain = "coordination"

    def record_session_ingest(self, record: SessionIngestRecord) -> None:
        with self._cursor() as cur:
            cur.execute(
                "INSERT INTO session_ingests (project_id, session_id, source, completed_at, message_count) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (project_id, session_id) DO UPDATE SET "
                "source = excluded.source, completed_at = excluded.completed_at, "
                "message_count = excluded.message_count",
                (self._project, record.session_id, record.source, utc(record.completed_at), record.message_count),
            )

    def get_session_ingest(self, session_id: str) -> SessionIngestRecord | None:
        with self._cursor() as cur:
            cur.execute("SELECT session_id, source, completed_at, message_count FROM session_ingests "
                        "WHERE project_id = %s AND session_id = %s", (self._project, session_id))
            row = cur.fetchone()
        if row is None:
            return None
        return SessionIngestRecord(row[0], row[1], utc_required(row[2]), self._int(row[3]))

    def _lease(self, row: Sequence[Any]) -> Lease:
        return Lease(row[0], row[1], self._int(row[2]), utc_required(row[3]))

    def acquire_lease(self, name: str, holder: str, ttl_seconds: float) -> Lease | None:
        with self._cursor() as cur:
            row = grant_lease(cur, self._project, name, holder, ttl_seconds)
        return self._lease(row) if row else None

    def renew_lease(self, lease: Lease, ttl_seconds: float) -> Lease:
        with self._cursor() as cur:
            row = extend_lease(cur, self._project, lease, ttl_seconds)
        if row is None:
            raise self._conflict("the lease was lost (expired or granted to another holder)", "lease_lost")
        return self._lease(row)

    def release_lease(self, lease: Lease) -> None:
        with self._cursor() as cur:
            free_lease(cur, self._project, lease)

    def check_fence(self, lease: Lease) -> None:
        with self._cursor() as cur:
            if not live_lease(cur, self._project, lease):
                raise self._conflict("the lease is no longer the live grant", "fence_mismatch")


# The lease statements, shared with the passive inbox's drain lease (``scope`` is the row's project_id).

def grant_lease(cur: Any, scope: str, name: str, holder: str, ttl_seconds: float) -> Sequence[Any] | None:
    """Grant (or re-grant to the same live holder, same fence) unless another holder's grant is live."""
    cur.execute(
        "INSERT INTO leases AS l (project_id, name, holder, fence, expires_at) "
        "VALUES (%s, %s, %s, 1, clock_timestamp() + make_interval(secs => %s)) "
        "ON CONFLICT (project_id, name) DO UPDATE SET holder = excluded.holder, "
        "expires_at = excluded.expires_at, "
        "fence = CASE WHEN l.holder = excluded.holder AND l.expires_at > clock_timestamp() "
        "THEN l.fence ELSE l.fence + 1 END "
        "WHERE l.expires_at <= clock_timestamp() OR l.holder = excluded.holder "
        "RETURNING name, holder, fence, expires_at",
        (scope, name, holder, float(ttl_seconds)),
    )
    row: Sequence[Any] | None = cur.fetchone()
    return row


def extend_lease(cur: Any, scope: str, lease: Lease, ttl_seconds: float) -> Sequence[Any] | None:
    cur.execute(
        "UPDATE leases SET expires_at = clock_timestamp() + make_interval(secs => %s) "
        "WHERE project_id = %s AND name = %s AND holder = %s AND fence = %s "
        "AND expires_at > clock_timestamp() RETURNING name, holder, fence, expires_at",
        (float(ttl_seconds), scope, lease.name, lease.holder, lease.fence),
    )
    row: Sequence[Any] | None = cur.fetchone()
    return row


def free_lease(cur: Any, scope: str, lease: Lease) -> None:
    cur.execute("UPDATE leases SET expires_at = clock_timestamp() WHERE project_id = %s AND name = %s "
                "AND holder = %s AND fence = %s AND expires_at > clock_timestamp()",
                (scope, lease.name, lease.holder, lease.fence))


def live_lease(cur: Any, scope: str, lease: Lease) -> bool:
    """Whether ``lease`` is the live grant; the row stays share-locked until the transaction ends."""
    cur.execute("SELECT 1 FROM leases WHERE project_id = %s AND name = %s AND holder = %s AND fence = %s "
                "AND expires_at > clock_timestamp() FOR SHARE",
                (scope, lease.name, lease.holder, lease.fence))
    return cur.fetchone() is not None
