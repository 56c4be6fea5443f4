"""The drain worker: this machine's outbox to the shared inbox, applied exactly once, acknowledged, pruned.

One ``run_once`` is a bounded pass through the durable checkpoints (``docs/postgresql.md``, "Several
machines"), each written before the next step starts, so a crash anywhere resumes from the last one:

1. deliver: the ready local prefix is claimed locally (``local claimed``), delivered chained to the
   machine's last delivered sequence (``remote pending``; the returned rows are the immutable readback of
   an uncertain insertion) and marked ``delivered`` with the new tail; an event whose transport form
   cannot be prepared (e.g. its project's scrubber does not build) is retried, then quarantined here
   (``lcm sync replay`` re-queues it at the end of the sequence);
2. apply: due inbox rows of each known project, of any machine, are claimed (``SKIP LOCKED``, per-machine
   order), and each effect commits with its ``applied`` transition in one fenced transaction (up to
   ``APPLY_CHUNK`` consecutive claims of a machine share one; an uncertain commit is confirmed by reading
   the rows back: applied under their claim's token); a failure is retried after a growing delay, then
   quarantined;
3. acknowledge: delivered events the inbox shows applied become ``acknowledged`` (quarantined ones
   ``quarantined``, a replayed one ``delivered`` again);
4. prune: acknowledged events' exact applied rows are deleted (or proved missing) and the local rows
   become ``remote_pruned``: only then may local retention remove them.

A fenced drain lease (database clock) admits one worker per machine; every inbox write checks it in its
own transaction. Network and model work never run inside a transaction.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import groupby, takewhile
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import ConflictError, DataValidationError, LcmError, StorageUnavailableError
from ..outbox import QUARANTINED, Outbox, OutboxEvent, outbox_path
from ..storage.contracts import ProjectStorage, Repositories
from ..storage.inbox import InboxClaim, InboxEvent, InboxRow, InboxState, PruneOutcome
from ..storage.models import Lease
from .effects import SeenEdits, effect_of, team_learning
from .killpoints import KillPoints
from .transport import transport_form

if TYPE_CHECKING:
    from ..config import Config

log = logging.getLogger("lcm.sync")

MAX_ROUNDS = 50
"""Claim rounds per project in one pass (a pass stays bounded; the next one continues)."""
APPLY_CHUNK = 50
"""Claims of one machine applied in one transaction."""


class ProjectAccess(Protocol):
    """The worker's way to a project's storage and scrubber, by root path."""

    def storage(self, root: str) -> ProjectStorage:
        """The project's storage, created when missing (this machine has events to deliver to it)."""
        ...
    def existing(self, root: str) -> ProjectStorage | None:
        """The project's storage when the backend holds it (nothing is created)."""
        ...
    def scrub(self, root: str, text: str) -> str: ...
    def roots(self) -> Sequence[str]:
        """Roots to apply other machines' events for besides those in the outbox."""
        ...
    def forget(self, root: str) -> None:
        """Drop a cached scope after a storage failure."""
        ...


@dataclass(frozen=True, slots=True)
class DrainSettings:
    batch: int = 200
    lease_ttl_s: float = 30.0
    claim_ttl_s: float = 30.0
    max_attempts: int = 5
    retry_base_s: float = 2.0

    @classmethod
    def from_config(cls, config: Config) -> DrainSettings:
        """The ``sync.*`` settings."""
        read = config.get
        return cls(batch=int(read("sync.batch")), lease_ttl_s=float(read("sync.lease_ttl_s")),
                   claim_ttl_s=float(read("sync.claim_ttl_s")), max_attempts=int(read("sync.max_attempts")),
                   retry_base_s=float(read("sync.retry_base_s")))

    def retry_after(self, attempts: int) -> float:
        return min(self.retry_base_s * 2.0 ** max(attempts - 1, 0), 300.0)


@dataclass(slots=True)
class DrainReport:
    """What one pass did; ``lease`` is False when another worker of this machine holds the drain lease."""

    lease: bool = True
    delivered: int = 0
    applied: int = 0
    retried: int = 0
    quarantined: int = 0
    acknowledged: int = 0
    pruned: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def progressed(self) -> bool:
        return any((self.delivered, self.applied, self.retried, self.quarantined, self.acknowledged, self.pruned))

    def add(self, other: DrainReport) -> None:
        for name in ("delivered", "applied", "retried", "quarantined", "acknowledged", "pruned"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.lease = self.lease and other.lease
        self.errors += other.errors


class LeaseLost(Exception):
    """The drain lease expired or was taken over: stop writing at once."""


class DrainWorker:
    def __init__(self, home: Path, projects: ProjectAccess, settings: DrainSettings, *,
                 env: Mapping[str, str] | None = None, holder: str | None = None) -> None:
        self.home = home
        self.projects = projects
        self.settings = settings
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"
        self._kill = KillPoints(os.environ if env is None else env)
        self._edits = SeenEdits()

    # --- one pass -------------------------------------------------------------

    def run_once(self) -> DrainReport:
        """One bounded pass; a storage outage raises StorageUnavailableError (nothing is lost: retry later)."""
        return self._pass(deliver=True)

    def settle(self) -> DrainReport:
        """Only acknowledge and prune (``lcm sync prune``): nothing is delivered or applied."""
        return self._pass(deliver=False)

    def _pass(self, *, deliver: bool) -> DrainReport:
        report = DrainReport()
        path = outbox_path(self.home)
        if not path.exists() and not self.projects.roots():
            return report
        with Outbox(path) as box:
            own = box.project_roots()
            scopes = {root: found for root in own if (found := self._storage_or_none(root, report)) is not None}
            for root in self.projects.roots():  # others' events are applied where a project already exists
                if root not in scopes and (found := self.projects.existing(root)) is not None:
                    scopes[root] = found
            if not scopes:
                return report
            roots = list(scopes)
            machine = box.machine_id
            lease = scopes[roots[0]].passive_inbox.acquire_drain_lease(machine, self.holder,
                                                                       self.settings.lease_ttl_s)
            if lease is None:
                report.lease = False
                return report
            try:
                if deliver:
                    lease = self._deliver(box, machine, lease, report)
                    lease = self._apply(scopes, lease, report)
                lease = self._acknowledge(box, lease, report)
                lease = self._prune(box, lease, report)
            except LeaseLost:
                report.lease = False
                report.errors.append("the drain lease was lost; another worker continues")
                return report
            scopes[roots[0]].passive_inbox.release_drain_lease(lease)
        return report

    def drain(self, *, max_passes: int = 1000) -> DrainReport:
        """Passes until one makes no progress (or the lease is held elsewhere)."""
        total = DrainReport()
        for _ in range(max_passes):
            report = self.run_once()
            total.add(report)
            if not report.progressed or not report.lease:
                break
        return total

    def _renew(self, root: str, lease: Lease) -> Lease:
        try:
            return self.projects.storage(root).passive_inbox.renew_drain_lease(lease, self.settings.lease_ttl_s)
        except ConflictError:
            raise LeaseLost from None

    # --- 1. deliver -------------------------------------------------------------

    def _deliver(self, box: Outbox, machine: str, lease: Lease, report: DrainReport) -> Lease:
        ready: list[tuple[OutboxEvent, str, str, str]] = []
        for item in box.delivery_prefix(limit=self.settings.batch):
            root = item.payload.get("project")
            if not isinstance(root, str) or not Path(root).is_absolute():
                box.quarantine_locally(item.uuid, "no_project")  # out of the chain: it can never be delivered
                report.quarantined += 1
                continue
            try:
                if item.transport is not None and item.digest is not None:
                    transport, digest = item.transport, item.digest
                else:
                    transport, digest = transport_form(item, root, partial(self.projects.scrub, root))
                self.projects.storage(root)
            except StorageUnavailableError:
                raise
            except LcmError as exc:  # e.g. a binding mismatch or a scrubber refusal
                if self._not_prepared(box, item, _code(exc), report):
                    continue  # quarantined here: out of the chain, the prefix goes on
                break  # retried later: the prefix waits for it
            ready.append((item, root, transport, digest))
        if not ready:
            return lease
        token = f"{self.holder}/{lease.fence}"
        claimed = {e.uuid: e for e in box.claim_delivery([(i.uuid, t, d) for i, _r, t, d in ready], token)}
        self._kill.reached("local_claimed")
        tail = box.delivered_tail()
        ready = list(takewhile(lambda entry: entry[0].uuid in claimed, ready))  # the prefix this worker holds
        for root, group in groupby(ready, key=lambda entry: entry[1]):
            events: list[InboxEvent] = []
            for item, _root, _t, _d in group:
                stored = claimed[item.uuid]
                assert stored.transport is not None and stored.digest is not None
                events.append(InboxEvent(stored.uuid, stored.version, machine, stored.seq, tail, stored.event,
                                         stored.transport, stored.digest, _when(stored.created_at)))
                tail = stored.seq
            try:
                rows = self.projects.storage(root).passive_inbox.deliver(lease, events)
            except ConflictError as exc:
                if exc.code == "fence_mismatch":
                    raise LeaseLost from None
                box.mark_delivery_failed(events[0].event_uuid, _code(exc))
                report.errors.append(f"event {events[0].seq} not delivered: {_code(exc)}")
                break
            if [r.event_uuid for r in rows] != [e.event_uuid for e in events] or \
                    not all(r.same_event(e) for r, e in zip(rows, events, strict=True)):
                box.mark_delivery_failed(events[0].event_uuid, "event_mismatch")
                report.errors.append(f"event {events[0].seq} not delivered: the inbox holds another event")
                break
            self._kill.reached("remote_inserted")
            box.mark_delivered([e.event_uuid for e in events], tail=events[-1].seq)
            self._kill.reached("local_delivered")
            report.delivered += len(events)
            lease = self._renew(root, lease)
        return lease

    def _not_prepared(self, box: Outbox, item: OutboxEvent, reason: str, report: DrainReport) -> bool:
        """An event whose transport form or project could not be prepared: retried after a growing delay,
        then, at ``max_attempts``, quarantined here (True). Only one never claimed for delivery: one that was
        may be in the inbox already, so it keeps its place (an uncertain insertion is confirmed by delivery)."""
        if item.transport is None and item.delivery_attempts + 1 >= self.settings.max_attempts:
            box.quarantine_locally(item.uuid, reason)
            report.quarantined += 1
            report.errors.append(f"event {item.seq} quarantined here: {reason} (lcm sync replay once fixed)")
            log.warning("passive event %s quarantined before delivery after %d attempts: %s", item.seq,
                        item.delivery_attempts + 1, reason)
            return True
        box.mark_delivery_failed(item.uuid, reason)
        report.errors.append(f"event {item.seq} not delivered: {reason}")
        return False

    # --- 2. apply ---------------------------------------------------------------

    def _apply(self, scopes: Mapping[str, ProjectStorage], lease: Lease, report: DrainReport) -> Lease:
        for root, storage in scopes.items():
            for _round in range(MAX_ROUNDS):
                try:
                    claims = storage.passive_inbox.claim(lease, limit=self.settings.batch,
                                                         ttl_seconds=self.settings.claim_ttl_s)
                except ConflictError:
                    raise LeaseLost from None
                if not claims:
                    break
                self._kill.reached("remote_claimed")
                stopped: set[str] = set()
                for machine, run in groupby(claims, key=lambda c: c.machine_id):  # claims come by machine, seq
                    mine = list(run)
                    for start in range(0, len(mine), APPLY_CHUNK):
                        applied = self._apply_chunk(root, storage, lease, mine[start:start + APPLY_CHUNK], report)
                        lease = self._renew(root, lease)  # a long backlog never outlives the lease
                        if not applied:
                            stopped.add(machine)  # its later claims wait: they expire and come back in order
                            break
                if stopped or len(claims) < self.settings.batch:
                    break
        return lease

    def _storage_or_none(self, root: str, report: DrainReport) -> ProjectStorage | None:
        try:
            return self.projects.storage(root)
        except StorageUnavailableError:
            raise
        except LcmError as exc:
            report.errors.append(f"project {root} skipped: {_code(exc)}")
            return None

    def _apply_chunk(self, root: str, storage: ProjectStorage, lease: Lease, chunk: list[InboxClaim],
                     report: DrainReport) -> bool:
        """One machine's consecutive claims in one fenced transaction (one commit for all of them); when an
        effect does not read or the transaction fails, one by one instead, so a poison event stays alone.
        False when one of them was neither applied nor quarantined (the rest of its machine's run then waits)."""
        try:
            effects = [effect_of(claim) for claim in chunk]
        except DataValidationError:
            effects = []
        if len(chunk) > 1 and effects:

            def apply(repos: Repositories) -> None:
                for claim, effect in zip(chunk, effects, strict=True):
                    repos.passive_inbox.complete(lease, claim, effect)
                    if self._edits.may_complete(root, effect):
                        team_learning(repos, claim, effect)

            try:
                storage.transaction(apply)
                committed = True
            except StorageUnavailableError:
                if not self._applied(storage, chunk):  # the commit may have happened: read the rows back
                    raise
                committed = True
            except ConflictError as exc:
                if exc.code == "fence_mismatch":
                    raise LeaseLost from None
                return False
            except LcmError:
                committed = False  # one by one below: the failing event is found and counted alone
            if committed:
                self._kill.reached("remote_applied")
                self._edits.committed(root, effects)
                report.applied += len(chunk)
                return True
        return all(self._apply_one(root, storage, lease, claim, report) for claim in chunk)

    def _apply_one(self, root: str, storage: ProjectStorage, lease: Lease, claim: InboxClaim,
                   report: DrainReport) -> bool:
        """Apply one claimed event; False when its machine's later events must wait (it failed and will be
        retried, or its claim was lost); True when it was applied or quarantined."""
        try:
            effect = effect_of(claim)
        except DataValidationError as exc:
            return self._failed(storage, lease, claim, _code(exc), report)

        def apply(repos: Repositories) -> None:
            repos.passive_inbox.complete(lease, claim, effect)
            if self._edits.may_complete(root, effect):
                team_learning(repos, claim, effect)

        try:
            storage.transaction(apply)
        except StorageUnavailableError:
            if not self._applied(storage, [claim]):  # the commit may have happened: read the row back
                raise
        except ConflictError as exc:
            if exc.code == "fence_mismatch":
                raise LeaseLost from None
            return False
        except LcmError as exc:
            return self._failed(storage, lease, claim, _code(exc), report)
        self._kill.reached("remote_applied")
        self._edits.committed(root, [effect])
        report.applied += 1
        return True

    @staticmethod
    def _applied(storage: ProjectStorage, claims: Sequence[InboxClaim]) -> bool:
        """Whether every claim's row is applied under that claim's token (the readback of an uncertain commit)."""
        rows = {r.event_uuid: r for r in storage.passive_inbox.get([c.event_uuid for c in claims])}
        return all((row := rows.get(c.event_uuid)) is not None and row.state is InboxState.APPLIED
                   and row.claim_token == c.token for c in claims)

    def _failed(self, storage: ProjectStorage, lease: Lease, claim: InboxClaim, reason: str,
                report: DrainReport) -> bool:
        attempts = claim.attempts + 1
        quarantine = attempts >= self.settings.max_attempts
        try:
            storage.passive_inbox.fail(lease, claim, reason, quarantine=quarantine,
                                       retry_after_s=self.settings.retry_after(attempts))
        except ConflictError as exc:
            if exc.code == "fence_mismatch":
                raise LeaseLost from None
            return False
        if quarantine:
            report.quarantined += 1
            log.warning("passive event %s/%s quarantined after %d attempts: %s", claim.machine_id, claim.seq,
                        attempts, reason)
        else:
            report.retried += 1
        return quarantine  # quarantined: it no longer holds its machine's later events back

    # --- 3. acknowledge -------------------------------------------------------------

    def _acknowledge(self, box: Outbox, lease: Lease, report: DrainReport) -> Lease:
        for root, items in _by_root(box.awaiting_acknowledgement(limit=self.settings.batch)):
            storage = self._storage_or_none(root, report)
            if storage is None:
                continue
            found = {r.event_uuid: r for r in storage.passive_inbox.get([i.uuid for i in items])}
            applied: list[str] = []
            for item in items:
                row = found.get(item.uuid)
                if row is None or row.digest != item.digest or row.seq != item.seq:
                    box.note_delivery_error(item.uuid, "remote_row_missing" if row is None else "remote_row_mismatch")
                    report.errors.append(f"event {item.seq}: the inbox row is missing or differs; not acknowledged")
                elif row.state is InboxState.APPLIED:
                    applied.append(item.uuid)
                elif row.state is InboxState.QUARANTINED and item.delivery != QUARANTINED:
                    box.mark_remote_quarantined(item.uuid, row.last_error or "quarantined")
                elif row.state is not InboxState.QUARANTINED and item.delivery == QUARANTINED:
                    box.reopen_delivered(item.uuid)  # replayed by an operator
            if applied:
                box.acknowledge(applied)
                self._kill.reached("local_acknowledged")
                report.acknowledged += len(applied)
            lease = self._renew(root, lease)
        return lease

    # --- 4. prune -------------------------------------------------------------------

    def _prune(self, box: Outbox, lease: Lease, report: DrainReport) -> Lease:
        for root, items in _by_root(box.acknowledged(limit=self.settings.batch)):
            storage = self._storage_or_none(root, report)
            if storage is None:
                continue
            try:
                outcomes = storage.passive_inbox.prune(lease, [_exact_key(i) for i in items])
            except ConflictError:
                raise LeaseLost from None
            self._kill.reached("remote_pruned")
            done = [i.uuid for i, o in zip(items, outcomes, strict=True) if o is not PruneOutcome.REFUSED]
            for item, outcome in zip(items, outcomes, strict=True):
                if outcome is PruneOutcome.REFUSED:
                    box.note_delivery_error(item.uuid, "remote_prune_refused")
                    report.errors.append(f"event {item.seq}: its inbox row is not the applied one; kept")
            box.mark_remote_pruned(done)
            self._kill.reached("local_remote_pruned")
            report.pruned += len(done)
            lease = self._renew(root, lease)
        return lease


def _by_root(items: Sequence[OutboxEvent]) -> Iterator[tuple[str, list[OutboxEvent]]]:
    groups: dict[str, list[OutboxEvent]] = {}
    for item in items:
        root = item.payload.get("project")
        if isinstance(root, str):
            groups.setdefault(root, []).append(item)
    yield from groups.items()


def _exact_key(item: OutboxEvent) -> InboxRow:
    """The inbox row ``item`` must be, as this machine delivered it (``prune`` matches uuid, machine,
    sequence and digest exactly and requires the row to be applied)."""
    assert item.transport is not None and item.digest is not None
    when = _when(item.created_at)
    return InboxRow(item.uuid, item.version, item.machine_id, item.seq, item.event, item.transport, item.digest,
                    when, when, InboxState.APPLIED, 0, None, None, when, None)


def _when(stamp: float) -> datetime:
    return datetime.fromtimestamp(stamp, UTC)


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "code", None) or type(exc).__name__)

