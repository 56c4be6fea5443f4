"""The drain worker in-process: two machines on one project, a stolen lease, a poison event, an outage,
duplicate deliveries; the invariants after each (``machines.check_invariants``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.app import App
from lcm_framework.errors import StorageUnavailableError
from lcm_framework.outbox import Outbox, outbox_path
from lcm_framework.sync.projects import AppProjects, StandaloneApps
from lcm_framework.sync.worker import DrainSettings, DrainWorker
from tests.postgres.support import TestDatabase

from .machines import Machine, check_invariants, log_rows, make_machines, plugins, proxy_to


@contextmanager
def worker_for(machine: Machine, *, wrap: Any = None) -> Iterator[DrainWorker]:
    config = machine.config()
    seed = App(config, plugins())
    apps = StandaloneApps(seed)
    projects = AppProjects(apps.app_for, lambda: [str(machine.root)])  # as `lcm sync` run in the project
    try:
        yield DrainWorker(machine.home, wrap(projects) if wrap else projects, DrainSettings.from_config(config),
                          env={})
    finally:
        projects.close()
        apps.close()
        seed.close()


@pytest.fixture
def team(pg: TestDatabase, pg_schema: str, tmp_path: Path) -> list[Machine]:
    return make_machines(pg, pg_schema, tmp_path, pg.url)


def test_two_machines_apply_each_event_once_in_order_then_prune(pg: TestDatabase, pg_schema: str,
                                                                team: list[Machine]) -> None:
    a, b = team
    a.capture(3, files=("src/a.py", "src/b.py"))
    a.capture(2, session="t", files=("src/b.py", "src/a.py"))
    b.capture(4, files=("src/a.py", "src/b.py"))
    with worker_for(a) as wa, worker_for(b) as wb:
        first = wa.drain()
        assert first.delivered == 5 and first.applied == 5 and first.acknowledged == 5 and first.pruned == 5
        check_invariants(pg, pg_schema, team, final=False)
        second = wb.drain()
        assert second.delivered == 4 and second.pruned == 4
        storage = wb.projects.storage(str(b.root))  # the third session made one team candidate
        (candidate,) = storage.promoted_memory.list_memories(tag="co-edit")
    assert candidate.content.startswith("src/a.py and src/b.py are usually changed together (3 sessions")
    assert json.loads(candidate.metadata or "{}")["events"] == [b.events()[0].uuid]  # lineage: the event
    check_invariants(pg, pg_schema, team, final=True)
    log = log_rows(pg, pg_schema)
    assert len(log) == 9 and {m for _u, m, _s, _o in log} == {a.events()[0].machine_id, b.events()[0].machine_id}
    with Outbox(outbox_path(a.home)) as box:  # local retention: only processed, remote-pruned rows go
        assert box.prune_processed(older_than_s=0) == 0
        for event in box.events()[:2]:
            box.mark_processed(event.uuid)
        assert box.prune_processed(older_than_s=0) == 2
        assert len(box.events()) == 3


def test_a_machine_applies_the_events_of_an_offline_one(pg: TestDatabase, pg_schema: str,
                                                        team: list[Machine]) -> None:
    a, b = team
    b.capture(3)
    with worker_for(b, wrap=_DeliverOnly) as wb:
        assert wb.run_once().delivered == 3  # b delivers, then goes offline before applying
    with worker_for(a) as wa:
        assert wa.run_once().applied == 3  # a, with nothing of its own, applies b's events
    with worker_for(b) as wb:
        back = wb.drain()  # b returns: acknowledges and prunes what a applied
        assert back.applied == 0 and back.acknowledged == 3 and back.pruned == 3
    check_invariants(pg, pg_schema, team, final=True)


class _DeliverOnly:
    """Project access whose inbox claims nothing (a machine that goes offline right after delivering)."""

    def __init__(self, inner: AppProjects) -> None:
        self._inner = inner

    def storage(self, root: str) -> Any:
        return _NoClaims(self._inner.storage(root))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _NoClaims:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.passive_inbox = _Inbox(inner.passive_inbox)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Inbox:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def claim(self, *_args: Any, **_kwargs: Any) -> list[Any]:
        return []

    def get(self, *_args: Any) -> list[Any]:
        return []  # offline: no acknowledgement either

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_lease_stolen_after_expiry_fences_the_old_worker_out(pg: TestDatabase, pg_schema: str,
                                                               team: list[Machine]) -> None:
    a, _b = team
    a.capture(4)
    stalled, resume = threading.Event(), threading.Event()

    class Stalling:
        """The first scrub stalls the worker past its lease (as a long GC pause or a suspended laptop)."""

        def __init__(self, inner: AppProjects) -> None:
            self._inner = inner

        def scrub(self, root: str, text: str) -> str:
            if not stalled.is_set():
                stalled.set()
                resume.wait(30)
            return self._inner.scrub(root, text)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

    result: dict[str, Any] = {}
    a.capture(1)  # an event with a command, so the worker scrubs it
    with Outbox(outbox_path(a.home)) as box:
        box.capture("PostToolUse", {"session_id": "a-s", "project": str(a.root),
                                    "tool_facts": {"tool": "Bash", "status": "ok", "command": "make test"}})
    with worker_for(a, wrap=Stalling) as old:
        thread = threading.Thread(target=lambda: result.setdefault("old", old.run_once()))
        thread.start()
        assert stalled.wait(30)
        time.sleep(1.3)  # sync.lease_ttl_s = 1: the stalled worker's lease expires
        with worker_for(a) as thief:
            thief.projects.scrub(str(a.root), "warm")  # its scrubber built first: a build can outlast the 1 s lease
            taken = thief.drain()
        assert taken.lease and taken.applied == 6
        resume.set()
        thread.join(30)
    assert result["old"].lease is False and result["old"].delivered == 0  # its writes were refused
    check_invariants(pg, pg_schema, team, final=True)


def test_a_poison_event_is_quarantined_without_blocking_and_replays_exactly(pg: TestDatabase, pg_schema: str,
                                                                            team: list[Machine]) -> None:
    a, _b = team
    a.capture(1)
    (poison,) = a.capture(1, poison=True)
    a.capture(2)
    with worker_for(a) as wa:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            wa.drain()
            if len(log_rows(pg, pg_schema)) == 3:
                break
            time.sleep(0.1)  # sync.retry_base_s = 0.1: the poison event's retries come due
        report = wa.drain()
    assert len(log_rows(pg, pg_schema)) == 3 and report.errors == []
    (kept,) = [e for e in a.events() if e.uuid == poison.uuid]
    assert kept.delivery == "quarantined" and kept.delivery_error == "payload_shape"
    check_invariants(pg, pg_schema, team, final=True)
    with pg.connect() as conn:
        row = conn.execute(f'SELECT state, attempts, payload, digest FROM "{pg_schema}".passive_event_inbox '
                           "WHERE event_uuid = %s", (poison.uuid,)).fetchone()
    assert row[0] == "quarantined" and row[1] == 3  # sync.max_attempts
    assert row[2] == kept.transport and row[3] == kept.digest  # kept exactly as delivered


def test_postgresql_unreachable_for_a_while_loses_nothing(pg: TestDatabase, pg_schema: str,
                                                          tmp_path: Path) -> None:
    with proxy_to(pg.url) as proxy:
        team = make_machines(pg, pg_schema, tmp_path, proxy.url(pg.url))
        a, _b = team
        a.capture(3)
        with worker_for(a) as wa:
            assert wa.run_once().applied == 3
            proxy.stop()
            a.capture(4)
            with pytest.raises(StorageUnavailableError):
                wa.run_once()
            assert sum(e.delivery == "pending" for e in a.events()) == 4  # kept, in order, for later
            with Outbox(outbox_path(a.home)) as box:  # processed locally meanwhile: retention keeps them
                for event in box.events():
                    box.mark_processed(event.uuid)
                assert box.prune_processed(older_than_s=0) == 3 and len(box.events()) == 4
            proxy.start()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    wa.drain()
                    break
                except StorageUnavailableError:  # the pool reconnects on its own time
                    time.sleep(0.2)
            wa.drain()
        check_invariants(pg, pg_schema, team, final=True)
        assert len(log_rows(pg, pg_schema)) == 7


def test_duplicate_deliveries_change_nothing(pg: TestDatabase, pg_schema: str, team: list[Machine]) -> None:
    a, _b = team
    a.capture(3)
    with worker_for(a, wrap=_DeliverOnly) as wa:
        wa.run_once()
    with Outbox(outbox_path(a.home)) as box:  # as if the confirmation of the delivery had been lost
        box._db.execute("UPDATE events SET delivery = 'claimed'")
        box._db.execute("DELETE FROM meta WHERE key = 'delivered_tail'")
    with worker_for(a) as wa:
        report = wa.drain()
    assert report.delivered == 3 and report.applied == 3  # delivered again: the stored rows read back
    check_invariants(pg, pg_schema, team, final=True)
    assert len(log_rows(pg, pg_schema)) == 3
