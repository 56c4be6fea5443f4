"""The passive-event inbox: deliveries chained per machine, SKIP LOCKED claims in per-machine order,
fenced applied transitions, quarantine and exact replay, exact applied-row prune.

Every write first checks the caller's drain lease (``leases`` rows under ``DRAIN_SCOPE``, timed by the
database clock) and keeps it share-locked to the end of the transaction, so a worker whose lease expired
or was taken over cannot write. ``complete`` runs inside the caller's transaction with the rest of the
effect: the applied transition and the effect commit together or not at all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import (
    DRAIN_LEASE_PREFIX,
    InboxBacklog,
    InboxClaim,
    InboxEvent,
    InboxRow,
    InboxState,
    Lease,
    PassiveEffect,
    PruneOutcome,
)

from .base import Repository, utc, utc_required
from .coordination import extend_lease, free_lease, grant_lease, live_lease

DRAIN_SCOPE = "lcm:passive-drain"
"""The ``leases.project_id`` of drain leases: one per machine, whatever projects it delivers to."""

_OPEN = "('pending', 'claimed', 'retry')"
_DUE = ("(state = 'pending' OR (state = 'retry' AND next_attempt_at <= clock_timestamp()) "
        "OR (state = 'claimed' AND claim_expires_at <= clock_timestamp()))")
_COLUMNS = ("event_uuid::text, version, machine_id, seq, event, payload, digest, created_at, inserted_at, state, "
            "attempts, last_error, claim_token, applied_at, quarantined_at")
# Per machine, its open rows by sequence; a row is claimable while it and every earlier open row of its
# machine are due and this project's (a running AND over the machine's open rows).
_RUNNABLE = f"""
SELECT event_uuid, machine_id, seq FROM (
    SELECT event_uuid, machine_id, seq,
           bool_and({_DUE} AND project_id = %(p)s) OVER (PARTITION BY machine_id ORDER BY seq) AS runnable
    FROM passive_event_inbox WHERE state IN {_OPEN}
) open_rows WHERE runnable ORDER BY machine_id, seq LIMIT %(n)s
"""


class PgPassiveInbox(Repository):
    domain = "passive_inbox"

    # --- the drain lease ------------------------------------------------------

    def acquire_drain_lease(self, machine_id: str, holder: str, ttl_seconds: float) -> Lease | None:
        with self._cursor() as cur:
            row = grant_lease(cur, DRAIN_SCOPE, DRAIN_LEASE_PREFIX + machine_id, holder, ttl_seconds)
        return self._lease(row) if row else None

    def renew_drain_lease(self, lease: Lease, ttl_seconds: float) -> Lease:
        with self._cursor() as cur:
            row = extend_lease(cur, DRAIN_SCOPE, lease, ttl_seconds)
        if row is None:
            raise self._conflict("the drain lease was lost (expired or granted to another holder)", "lease_lost")
        return self._lease(row)

    def release_drain_lease(self, lease: Lease) -> None:
        with self._cursor() as cur:
            free_lease(cur, DRAIN_SCOPE, lease)

    def _lease(self, row: Sequence[Any]) -> Lease:
        return Lease(row[0], row[1], self._int(row[2]), utc_required(row[3]))

    def _fenced(self, cur: Any, lease: Lease) -> None:
        if not live_lease(cur, DRAIN_SCOPE, lease):
            raise self._conflict("the drain lease is no longer the live grant", "fence_mismatch")

    # --- delivery -------------------------------------------------------------

    def deliver(self, lease: Lease, events: Sequence[InboxEvent]) -> list[InboxRow]:
        if not events:
            return []
        machine = events[0].machine_id
        with self._cursor() as cur:
            self._fenced(cur, lease)
            cur.execute("INSERT INTO passive_event_streams (machine_id, last_seq) VALUES (%s, 1) "
                        "ON CONFLICT (machine_id) DO NOTHING RETURNING 1", (machine,))
            fresh = cur.fetchone() is not None
            cur.execute("SELECT last_seq FROM passive_event_streams WHERE machine_id = %s FOR UPDATE", (machine,))
            last: int | None = None if fresh else self._int(cur.fetchone()[0])
            cur.execute(f"SELECT project_id, {_COLUMNS} FROM passive_event_inbox WHERE event_uuid = ANY(%s::uuid[]) "
                        "OR (machine_id = %s AND seq = ANY(%s))",
                        ([e.event_uuid for e in events], machine, [e.seq for e in events]))
            stored = {r[1]: (r[0], self._row(r[1:])) for r in cur.fetchall()}
            taken = {row.seq: row.event_uuid for _p, row in stored.values() if row.machine_id == machine}
            out: list[InboxRow] = []
            new: list[InboxEvent] = []
            for event in events:
                found = stored.get(event.event_uuid)
                if found is not None:
                    if found[0] != self._project or not found[1].same_event(event):
                        raise self._conflict("a delivered event differs from the one stored under its uuid",
                                             "event_mismatch")
                    out.append(found[1])
                    continue
                if event.seq in taken:
                    raise self._conflict("another event is stored at this machine sequence", "event_mismatch")
                if event.prev_seq != last:
                    raise self._conflict("an event must follow its machine's last delivered sequence",
                                         "sequence_gap")
                new.append(event)
                last = event.seq
            if new:
                cur.executemany(
                    "INSERT INTO passive_event_inbox (event_uuid, project_id, machine_id, seq, version, event, "
                    "payload, digest, created_at) VALUES (%s::uuid, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(e.event_uuid, self._project, e.machine_id, e.seq, e.version, e.event, e.payload, e.digest,
                      e.created_at) for e in new])
                cur.execute("UPDATE passive_event_streams SET last_seq = %s, updated_at = clock_timestamp() "
                            "WHERE machine_id = %s", (last, machine))
                cur.execute(f"SELECT {_COLUMNS} FROM passive_event_inbox WHERE event_uuid = ANY(%s::uuid[])",
                            ([e.event_uuid for e in new],))
                inserted = {r[0]: self._row(r) for r in cur.fetchall()}
                out.extend(inserted[e.event_uuid] for e in new)
            elif fresh:
                raise self._conflict("an event must follow its machine's last delivered sequence", "sequence_gap")
        out.sort(key=lambda row: row.seq)
        return out

    def get(self, event_uuids: Sequence[str]) -> list[InboxRow]:
        if not event_uuids:
            return []
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM passive_event_inbox WHERE event_uuid = ANY(%s::uuid[]) "
                        "AND project_id = %s", (list(event_uuids), self._project))
            found = {r[0]: self._row(r) for r in cur.fetchall()}
        return [found[u] for u in event_uuids if u in found]

    # --- claims and application -------------------------------------------------

    def claim(self, lease: Lease, *, limit: int, ttl_seconds: float) -> list[InboxClaim]:
        if limit == 0:
            return []
        with self._cursor() as cur:
            self._fenced(cur, lease)
            cur.execute(_RUNNABLE, {"p": self._project, "n": limit})
            expected = [(str(u), m, self._int(s)) for u, m, s in cur.fetchall()]
            if not expected:
                return []
            cur.execute(f"SELECT event_uuid::text FROM passive_event_inbox WHERE event_uuid = ANY(%s::uuid[]) "
                        f"AND {_DUE} FOR UPDATE SKIP LOCKED", ([u for u, _m, _s in expected],))
            locked = {r[0] for r in cur.fetchall()}
            taken: list[str] = []
            stopped: set[str] = set()
            for event_uuid, machine, _seq in expected:  # a machine's run ends at its first row not locked here
                if machine in stopped:
                    continue
                if event_uuid in locked:
                    taken.append(event_uuid)
                else:
                    stopped.add(machine)
            if not taken:
                return []
            token = f"{lease.holder}/{lease.fence}/{os.urandom(8).hex()}"
            cur.execute(
                "UPDATE passive_event_inbox SET state = 'claimed', claim_token = %s, "
                "claim_expires_at = clock_timestamp() + make_interval(secs => %s) WHERE event_uuid = ANY(%s::uuid[]) "
                "RETURNING event_uuid::text, machine_id, seq, version, event, payload, attempts, claim_expires_at",
                (token, float(ttl_seconds), taken))
            claims = [InboxClaim(u, m, self._int(s), self._int(v), e, p, self._int(a), token, utc_required(x))
                      for u, m, s, v, e, p, a, x in cur.fetchall()]
        claims.sort(key=lambda c: (c.machine_id, c.seq))
        return claims

    def _claimed(self, cur: Any, lease: Lease, claim: InboxClaim) -> Any:
        """Lock the claimed row; ConflictError unless it is still ``claim``'s (returns its created_at)."""
        self._fenced(cur, lease)
        cur.execute("SELECT state, claim_token, project_id, created_at FROM passive_event_inbox "
                    "WHERE event_uuid = %s::uuid FOR UPDATE", (claim.event_uuid,))
        row = cur.fetchone()
        if row is None or row[0] != InboxState.CLAIMED.value or row[1] != claim.token or row[2] != self._project:
            raise self._conflict("the claim was lost (expired and claimed again, or finished)", "claim_lost")
        return row[3]

    def complete(self, lease: Lease, claim: InboxClaim, effect: PassiveEffect) -> None:
        with self._cursor() as cur:
            observed_at = self._claimed(cur, lease, claim)
            cur.execute(f"SELECT 1 FROM passive_event_inbox WHERE machine_id = %s AND seq < %s AND state IN {_OPEN} "
                        "LIMIT 1", (claim.machine_id, claim.seq))
            if cur.fetchone() is not None:
                raise self._conflict("an earlier event of this machine is not applied yet", "order")
            cur.execute(
                "INSERT INTO passive_event_log (project_id, event_uuid, machine_id, seq, event, session_id, "
                "tool_name, status, files, detail, observed_at) VALUES (%s, %s::uuid, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s)",
                (self._project, claim.event_uuid, claim.machine_id, claim.seq, claim.event, effect.session_id,
                 effect.tool_name, effect.status, list(effect.files), effect.detail, observed_at))
            if effect.co_edit and effect.session_id is not None and effect.files:
                self._count_co_edits(cur, effect.session_id, list(dict.fromkeys(effect.files)))
            cur.execute("UPDATE passive_event_inbox SET state = 'applied', applied_at = clock_timestamp(), "
                        "claim_expires_at = NULL WHERE event_uuid = %s::uuid", (claim.event_uuid,))

    def _count_co_edits(self, cur: Any, session_id: str, files: list[str]) -> None:
        """Add the files this session edits for the first time; each new pair gains one session."""
        cur.execute("INSERT INTO passive_session_files (project_id, session_id, path) SELECT %s, %s, f "
                    "FROM unnest(%s::text[]) AS f ON CONFLICT DO NOTHING RETURNING path",
                    (self._project, session_id, files))
        new = {r[0] for r in cur.fetchall()}
        if not new:
            return
        cur.execute("SELECT path FROM passive_session_files WHERE project_id = %s AND session_id = %s",
                    (self._project, session_id))
        present = [r[0] for r in cur.fetchall()]
        pairs = sorted({(min(a, b), max(a, b)) for a in new for b in present if a != b})
        if pairs:
            cur.executemany("INSERT INTO passive_co_edits (project_id, path_a, path_b, sessions) VALUES "
                            "(%s, %s, %s, 1) ON CONFLICT (project_id, path_a, path_b) DO UPDATE SET "
                            "sessions = passive_co_edits.sessions + 1",
                            [(self._project, a, b) for a, b in pairs])

    def fail(self, lease: Lease, claim: InboxClaim, error: str, *, quarantine: bool,
             retry_after_s: float) -> InboxRow:
        with self._cursor() as cur:
            self._claimed(cur, lease, claim)
            if quarantine:
                cur.execute(f"UPDATE passive_event_inbox SET state = 'quarantined', "
                            f"quarantined_at = clock_timestamp(), attempts = attempts + 1, last_error = %s, "
                            f"claim_expires_at = NULL WHERE event_uuid = %s::uuid RETURNING {_COLUMNS}",
                            (error[:500], claim.event_uuid))
            else:
                cur.execute(f"UPDATE passive_event_inbox SET state = 'retry', attempts = attempts + 1, "
                            f"last_error = %s, claim_token = NULL, claim_expires_at = NULL, "
                            f"next_attempt_at = clock_timestamp() + make_interval(secs => %s) "
                            f"WHERE event_uuid = %s::uuid RETURNING {_COLUMNS}",
                            (error[:500], float(retry_after_s), claim.event_uuid))
            return self._row(cur.fetchone())

    # --- acknowledgement, prune, operators ------------------------------------------

    def prune(self, lease: Lease, rows: Sequence[InboxRow]) -> list[PruneOutcome]:
        if not rows:
            return []
        with self._cursor() as cur:
            self._fenced(cur, lease)
            cur.execute(
                "DELETE FROM passive_event_inbox i USING unnest(%s::uuid[], %s::text[], %s::bigint[], %s::text[]) "
                "AS k(event_uuid, machine_id, seq, digest) WHERE i.event_uuid = k.event_uuid "
                "AND i.machine_id = k.machine_id AND i.seq = k.seq AND i.digest = k.digest "
                "AND i.state = 'applied' AND i.project_id = %s "
                "RETURNING i.event_uuid::text, i.machine_id, i.seq, i.digest",
                ([r.event_uuid for r in rows], [r.machine_id for r in rows], [r.seq for r in rows],
                 [r.digest for r in rows], self._project))
            deleted = {(u, m, self._int(q), d) for u, m, q, d in cur.fetchall()}
            cur.execute("SELECT event_uuid::text FROM passive_event_inbox WHERE event_uuid = ANY(%s::uuid[])",
                        ([r.event_uuid for r in rows],))
            present = {r[0] for r in cur.fetchall()}
        return [PruneOutcome.PRUNED if (r.event_uuid, r.machine_id, r.seq, r.digest) in deleted else
                PruneOutcome.REFUSED if r.event_uuid in present else PruneOutcome.MISSING for r in rows]

    def quarantined(self) -> list[InboxRow]:
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM passive_event_inbox WHERE project_id = %s AND state = 'quarantined' "
                        "ORDER BY machine_id, seq", (self._project,))
            return [self._row(r) for r in cur.fetchall()]

    def replay(self, event_uuid: str) -> InboxRow:
        with self._cursor() as cur:
            cur.execute(f"UPDATE passive_event_inbox SET state = 'pending', attempts = 0, quarantined_at = NULL, "
                        f"last_error = NULL, claim_token = NULL, next_attempt_at = clock_timestamp() "
                        f"WHERE event_uuid = %s::uuid AND project_id = %s AND state = 'quarantined' "
                        f"RETURNING {_COLUMNS}", (event_uuid, self._project))
            row = cur.fetchone()
            if row is not None:
                return self._row(row)
            cur.execute("SELECT state FROM passive_event_inbox WHERE event_uuid = %s::uuid AND project_id = %s",
                        (event_uuid, self._project))
            found = cur.fetchone()
        if found is None:
            raise self._not_found("this event in the project's inbox")
        raise self._conflict(f"the event is {found[0]}, not quarantined", "not_quarantined")

    def backlog(self) -> InboxBacklog:
        with self._cursor() as cur:
            cur.execute("SELECT machine_id, state, count(*) FROM passive_event_inbox WHERE project_id = %s "
                        "GROUP BY machine_id, state ORDER BY machine_id, state", (self._project,))
            by_machine: dict[str, dict[str, int]] = {}
            by_state: dict[str, int] = {}
            for machine, state, count in cur.fetchall():
                by_machine.setdefault(machine, {})[state] = self._int(count)
                by_state[state] = by_state.get(state, 0) + self._int(count)
            cur.execute(f"SELECT min(inserted_at) FILTER (WHERE state IN {_OPEN}), clock_timestamp(), "
                        "(SELECT last_error FROM passive_event_inbox WHERE project_id = %(p)s AND last_error IS NOT "
                        "NULL ORDER BY coalesce(quarantined_at, next_attempt_at) DESC LIMIT 1), "
                        "(SELECT count(*) FROM passive_event_log WHERE project_id = %(p)s) "
                        "FROM passive_event_inbox WHERE project_id = %(p)s", {"p": self._project})
            oldest, now, last_error, logged = cur.fetchone()
        return InboxBacklog(by_state=by_state, by_machine=by_machine, oldest_open_at=utc(oldest),
                            last_error=last_error, now=utc_required(now), log_rows=self._int(logged))

    def co_edits(self, path: str) -> dict[str, int]:
        with self._cursor() as cur:
            cur.execute("SELECT CASE WHEN path_a = %s THEN path_b ELSE path_a END, sessions FROM passive_co_edits "
                        "WHERE project_id = %s AND (path_a = %s OR path_b = %s) ORDER BY 1",
                        (path, self._project, path, path))
            return {f: self._int(n) for f, n in cur.fetchall()}

    def _row(self, r: Sequence[Any]) -> InboxRow:
        return InboxRow(event_uuid=str(r[0]), version=self._int(r[1]), machine_id=r[2], seq=self._int(r[3]),
                        event=r[4], payload=r[5], digest=r[6], created_at=utc_required(r[7]),
                        inserted_at=utc_required(r[8]), state=InboxState(r[9]), attempts=self._int(r[10]),
                        last_error=r[11], claim_token=r[12], applied_at=utc(r[13]), quarantined_at=utc(r[14]))
