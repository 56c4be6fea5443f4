"""The passive-event inbox repository: chained delivery, ordered SKIP LOCKED claims, fenced application,
quarantine and exact replay, exact prune; SQLite has no inbox."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.config import load_config
from lcm_framework.errors import ConflictError, DataValidationError, NotFoundError, UnsupportedCapabilityError
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.checked import CheckedBackend
from lcm_framework.storage.inbox import InboxState, PassiveEffect, PruneOutcome
from lcm_framework.storage.selection import open_backend
from tests.postgres.support import TestDatabase

from .conftest import make_event, ref

EFFECT = PassiveEffect(session_id="s1", tool_name="Edit", status="ok", files=("src/a.py",))


def _lease(storage: Any, machine: str = "m1", holder: str = "w1", ttl: float = 30.0) -> Any:
    lease = storage.passive_inbox.acquire_drain_lease(machine, holder, ttl)
    assert lease is not None
    return lease


def _apply(storage: Any, lease: Any, claim: Any, effect: PassiveEffect = EFFECT) -> None:
    storage.transaction(lambda repos: repos.passive_inbox.complete(lease, claim, effect))


def test_delivery_is_chained_per_machine_and_idempotent(pg_backend: CheckedBackend, chain: Callable[..., Any]
                                                          ) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        inbox, lease = storage.passive_inbox, _lease(storage)
        first = chain("m1", 1, 3)
        rows = inbox.deliver(lease, first)
        assert [r.seq for r in rows] == [1, 2, 3] and all(r.state is InboxState.PENDING for r in rows)
        assert all(r.same_event(e) for r, e in zip(rows, first, strict=True))
        again = inbox.deliver(lease, first + chain("m1", 4, 4, prev=3))  # a retry plus one new event
        assert [r.seq for r in again] == [1, 2, 3, 4]
        with pytest.raises(ConflictError) as gap:
            inbox.deliver(lease, chain("m1", 6, 7, prev=5))  # 5 never delivered: refused, nothing stored
        assert gap.value.code == "sequence_gap"
        assert inbox.get([e.event_uuid for e in chain("m1", 6, 7, prev=5)]) == []
        with pytest.raises(ConflictError) as first_gap:
            inbox.deliver(lease, chain("m2", 2, 2, prev=1))  # a new machine starts with no predecessor
        assert first_gap.value.code == "sequence_gap"
        changed = dataclasses.replace(first[0], payload='{"other": true}')
        with pytest.raises(ConflictError) as mismatch:
            inbox.deliver(lease, [changed])
        assert mismatch.value.code == "event_mismatch"
        squatter = dataclasses.replace(make_event("m1", 2, 1), event_uuid="00000000-0000-4000-8000-000000000002")
        with pytest.raises(ConflictError) as taken:
            inbox.deliver(lease, [squatter])
        assert taken.value.code == "event_mismatch"
        assert [r.seq for r in inbox.get([e.event_uuid for e in first])] == [1, 2, 3]


def test_claims_follow_each_machines_order_across_projects(pg_backend: CheckedBackend,
                                                          chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as alpha, closing(pg_backend.open_project(ref("beta"))) as beta:
        lease_a = _lease(alpha, "m1")
        lease_b = _lease(alpha, "m2", "w2")
        alpha.passive_inbox.deliver(lease_a, chain("m1", 1, 2))
        beta.passive_inbox.deliver(lease_a, chain("m1", 3, 3, prev=2))  # m1's 3rd event is beta's
        alpha.passive_inbox.deliver(lease_a, chain("m1", 4, 4, prev=3))
        alpha.passive_inbox.deliver(lease_b, chain("m2", 1, 2))
        claims = alpha.passive_inbox.claim(lease_a, limit=10, ttl_seconds=30)
        assert [(c.machine_id, c.seq) for c in claims] == [("m1", 1), ("m1", 2), ("m2", 1), ("m2", 2)]
        assert alpha.passive_inbox.claim(lease_a, limit=10, ttl_seconds=30) == []  # all held
        for claim in claims:
            _apply(alpha, lease_a, claim)
        assert alpha.passive_inbox.claim(lease_a, limit=10, ttl_seconds=30) == []  # m1/4 waits for beta's m1/3
        (third,) = beta.passive_inbox.claim(lease_a, limit=10, ttl_seconds=30)
        assert (third.machine_id, third.seq) == ("m1", 3)
        _apply(beta, lease_a, third)
        (fourth,) = alpha.passive_inbox.claim(lease_a, limit=10, ttl_seconds=30)
        assert fourth.seq == 4


def test_a_locked_row_is_skipped_and_ends_its_machines_run(pg: TestDatabase, pg_schema: str,
                                                          pg_backend: CheckedBackend,
                                                          chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        lease = _lease(storage)
        storage.passive_inbox.deliver(lease, chain("m1", 1, 3))
        storage.passive_inbox.deliver(lease, chain("m2", 1, 2))
        held = chain("m1", 1, 3)[1].event_uuid
        with pg.connect() as other, other.transaction():
            other.execute(f'SELECT 1 FROM "{pg_schema}".passive_event_inbox WHERE event_uuid = %s FOR UPDATE',
                          (held,))
            started = time.monotonic()
            claims = storage.passive_inbox.claim(lease, limit=10, ttl_seconds=30)
            assert time.monotonic() - started < 5  # never waits for the other transaction
        assert [(c.machine_id, c.seq) for c in claims] == [("m1", 1), ("m2", 1), ("m2", 2)]


def test_the_applied_transition_is_fenced_by_claim_and_lease(pg_backend: CheckedBackend,
                                                             chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        inbox = storage.passive_inbox
        lease = _lease(storage, ttl=0.3)
        inbox.deliver(lease, chain("m1", 1, 2))
        (stale,) = inbox.claim(lease, limit=1, ttl_seconds=0.2)
        time.sleep(0.35)
        with pytest.raises(ConflictError) as fenced:
            _apply(storage, lease, stale)  # the drain lease expired: no write
        assert fenced.value.code == "fence_mismatch"
        thief = _lease(storage, holder="w2")
        assert thief.fence > lease.fence
        (fresh,) = inbox.claim(thief, limit=1, ttl_seconds=30)  # the expired claim is taken over
        assert fresh.event_uuid == stale.event_uuid and fresh.token != stale.token
        with pytest.raises(ConflictError) as lost:
            _apply(storage, thief, stale)  # an old claim never completes, even under a live lease
        assert lost.value.code == "claim_lost"

        def crash(repos: Any) -> None:
            repos.passive_inbox.complete(thief, fresh, EFFECT)
            raise RuntimeError("the effect failed after the applied transition")

        with pytest.raises(Exception, match="rolled back"):
            storage.transaction(crash)
        assert inbox.get([fresh.event_uuid])[0].state is InboxState.CLAIMED  # rolled back with the effect
        _apply(storage, thief, fresh)
        row = inbox.get([fresh.event_uuid])[0]
        assert row.state is InboxState.APPLIED and row.claim_token == fresh.token  # exact readback
        with pytest.raises(ConflictError):
            _apply(storage, thief, fresh)  # applied once only
        assert inbox.backlog().log_rows == 1


def test_poison_events_are_quarantined_without_blocking_and_replayed_exactly(
        pg_backend: CheckedBackend, chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        inbox, lease = storage.passive_inbox, _lease(storage)
        events = chain("m1", 1, 2)
        inbox.deliver(lease, events)
        (poison,) = inbox.claim(lease, limit=1, ttl_seconds=30)
        retry = inbox.fail(lease, poison, "bad payload", quarantine=False, retry_after_s=60)
        assert retry.state is InboxState.RETRY and retry.attempts == 1
        assert inbox.claim(lease, limit=5, ttl_seconds=30) == []  # retrying head: its machine waits
        with pytest.raises(ConflictError):
            inbox.fail(lease, poison, "again", quarantine=True, retry_after_s=0)  # not claimed any more
        storage_backlog = inbox.backlog()
        assert storage_backlog.by_state == {"pending": 1, "retry": 1}
        assert storage_backlog.last_error == "bad payload" and storage_backlog.oldest_open_at is not None


def test_quarantine_replay_and_exact_prune(pg_backend: CheckedBackend, chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        inbox, lease = storage.passive_inbox, _lease(storage)
        events = chain("m1", 1, 2)
        inbox.deliver(lease, events)
        first, second = inbox.claim(lease, limit=5, ttl_seconds=30)
        quarantined = inbox.fail(lease, first, "unsupported payload", quarantine=True, retry_after_s=0)
        assert quarantined.state is InboxState.QUARANTINED and quarantined.attempts == 1
        _apply(storage, lease, second)  # a quarantined event does not block the next one
        assert [(r.seq, r.last_error) for r in inbox.quarantined()] == [(1, "unsupported payload")]
        applied = inbox.get([second.event_uuid])[0]
        mismatched = dataclasses.replace(applied, digest="0" * 64)
        assert inbox.prune(lease, [quarantined, mismatched]) == [PruneOutcome.REFUSED, PruneOutcome.REFUSED]
        assert inbox.prune(lease, [applied]) == [PruneOutcome.PRUNED]
        assert inbox.prune(lease, [applied]) == [PruneOutcome.MISSING]  # pruned already: proof by readback
        replayed = inbox.replay(first.event_uuid)
        with pytest.raises(ConflictError) as not_quarantined:
            inbox.replay(first.event_uuid)
        assert not_quarantined.value.code == "not_quarantined"
        assert replayed.state is InboxState.PENDING and replayed.same_event(events[0]) and replayed.attempts == 0
        (again,) = inbox.claim(lease, limit=5, ttl_seconds=30)
        _apply(storage, lease, again)
        assert inbox.backlog().log_rows == 2 and inbox.quarantined() == []
        with pytest.raises(NotFoundError):
            inbox.replay(events[1].event_uuid)  # pruned


def test_co_edits_count_sessions_editing_files_together(pg_backend: CheckedBackend,
                                                       chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        inbox, lease = storage.passive_inbox, _lease(storage)
        inbox.deliver(lease, chain("m1", 1, 4))
        effects = [PassiveEffect("s1", "Edit", "ok", ("a.py",), co_edit=True),
                   PassiveEffect("s1", "Edit", "ok", ("b.py", "a.py"), co_edit=True),
                   PassiveEffect("s2", "Edit", "ok", ("a.py", "b.py"), co_edit=True),
                   PassiveEffect("s3", "Read", "ok", ("a.py", "c.py"))]  # read, not edited: not counted
        for claim, effect in zip(inbox.claim(lease, limit=10, ttl_seconds=30), effects, strict=True):
            _apply(storage, lease, claim, effect)
        assert inbox.co_edits("a.py") == {"b.py": 2} and inbox.co_edits("b.py") == {"a.py": 2}
        assert inbox.co_edits("c.py") == {}


def test_bad_input_is_refused_before_the_database(pg_backend: CheckedBackend, chain: Callable[..., Any]) -> None:
    with closing(pg_backend.open_project(ref("alpha"))) as storage:
        lease = _lease(storage)
        bad = [dataclasses.replace(chain("m1", 1, 1)[0], event_uuid="NOT-A-UUID"),
               dataclasses.replace(chain("m1", 1, 1)[0], digest="xyz"),
               dataclasses.replace(chain("m1", 1, 1)[0], payload="a\x00b")]
        for event in bad:
            with pytest.raises(DataValidationError):
                storage.passive_inbox.deliver(lease, [event])
        with pytest.raises(DataValidationError):
            storage.passive_inbox.deliver(lease, [chain("m1", 1, 1)[0], chain("m1", 3, 3, prev=2)[0]])
        with pytest.raises(DataValidationError):
            storage.passive_inbox.get(["../etc"])


def test_sqlite_has_no_inbox(tmp_path: Path) -> None:
    config = load_config(env={"LCM_HOME": str(tmp_path / "home")}, project=tmp_path, plugins=build_plugins())
    backend = open_backend(config, "sqlite", plugins=build_plugins(config.env))
    try:
        assert backend.capabilities.passive_inbox is False
        with closing(backend.open_project(ref("solo"))) as storage:
            with pytest.raises(UnsupportedCapabilityError) as refused:
                storage.passive_inbox.backlog()
            assert refused.value.code == "no_passive_inbox"
    finally:
        backend.close()
