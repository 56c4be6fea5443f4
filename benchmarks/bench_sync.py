"""Team sync through the PostgreSQL inbox: a long offline backlog catching up, and a soak under faults.

1. Catch-up: machine A captures 10,000 passive events (``--quick``: 1,000) and a session while offline,
   then comes back. Printed: the drain's events/s (deliver, apply, acknowledge, prune), the time until
   B finds A's session (A's daemon stores it directly) and until B's view of the team log holds A's newest
   event (behind the whole backlog).
2. Soak (``--quick``: shorter): both machines capture events in threads for a while, each drain worker
   runs in a loop (two per machine, competing for its drain lease, a 3 s lease that expires and is taken
   over whenever a pass stalls), and every few seconds PostgreSQL is cut off (a proxy, not the server) and a
   poison event is captured. Printed: events captured, applied, quarantined,
   and whether the invariants held (every event applied once, in per-machine order, all pruned).

Needs LCM_TEST_POSTGRES_URL (``./dev bench`` sets it); runs in a throwaway schema.
"""

from __future__ import annotations

import logging
import random
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

from lcm_framework.app import App
from lcm_framework.errors import LcmError
from lcm_framework.outbox import Outbox, outbox_path
from lcm_framework.storage.models import SearchMode, SearchQuery
from lcm_framework.sync.projects import AppProjects, StandaloneApps
from lcm_framework.sync.worker import DrainSettings, DrainWorker
from tests.postgres.support import TestDatabase, Unavailable, database_or_unavailable
from tests.sync.machines import Machine, check_invariants, log_rows, make_machines, plugins, proxy_to


class Worker:
    """One machine's drain worker, in process (as the daemon runs it)."""

    def __init__(self, machine: Machine) -> None:
        config = machine.config()
        self.app = App(config, plugins())
        self.apps = StandaloneApps(self.app)
        self.projects = AppProjects(self.apps.app_for, lambda: [str(machine.root)])
        self.worker = DrainWorker(machine.home, self.projects, DrainSettings.from_config(config), env={})

    def close(self) -> None:
        self.projects.close()
        self.apps.close()
        self.app.close()


def _capture(machine: Machine, count: int, session: str) -> None:
    with Outbox(outbox_path(machine.home)) as box:
        for n in range(count):
            files = [str(machine.root / f"src/mod{n % 7}.py"), str(machine.root / f"src/mod{(n + 1) % 7}.py")]
            box.capture("PostToolUse", {"session_id": session, "project": str(machine.root), "agent": "claude",
                                        "tool_facts": {"tool": "Edit", "status": "ok", "files": files}})


def _session(machine: Machine, word: str) -> Path:
    import json

    path = machine.root / f"{machine.name}-session.jsonl"
    rows = [{"type": role, "sessionId": f"{machine.name}-session", "uuid": f"{machine.name}-{n}",
             "cwd": str(machine.root), "timestamp": f"2026-01-01T00:00:0{n}.000Z",
             "message": {"role": role, "content": f"the {word} release needs its migration first"}}
            for n, role in enumerate(("user", "assistant"))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def catch_up(db: TestDatabase, schema: str, work: Path, events: int) -> None:
    a, b = make_machines(db, schema, work / "catch-up", db.url)
    for machine in (a, b):
        machine.extra.update({"LCM_SYNC_BATCH": "1000", "LCM_SYNC_LEASE_TTL_S": "30", "LCM_SYNC_CLAIM_TTL_S": "30"})
    _capture(a, events, "a-offline")
    transcript = _session(a, "kestrel")
    wa, wb = Worker(a), Worker(b)
    try:
        from lcm_framework.ingest import ingest_session

        started = time.perf_counter()  # A is back: its daemon ingests its session and drains the backlog
        ingest_session(wa.app, transcript, project=a.root)
        with closing(wb.app.storage.open_project(wb.app.project_ref(b.root))) as storage:
            assert storage.lexical_search.search(SearchQuery("kestrel", mode=SearchMode.FULL_TEXT))
        session_at = time.perf_counter() - started
        newest = a.events()[-1].uuid
        seen_at = None
        while seen_at is None:
            report = wa.worker.run_once()
            if any(u == newest for u, _m, _s, _o in log_rows(db, schema)):
                seen_at = time.perf_counter() - started
            elif not report.progressed:
                raise RuntimeError(f"the drain stopped making progress: {report}")
        wa.worker.drain()
        drained = time.perf_counter() - started
    finally:
        wa.close()
        wb.close()
    check_invariants(db, schema, [a, b], final=True)
    print(f"catch-up of {events} events: {events / drained:,.0f} events/s ({drained:.1f} s to deliver, apply, "
          "acknowledge and prune all)")
    print(f"  B finds A's session {session_at:.2f} s after A is back (stored directly), and sees A's newest "
          f"event in the team log after {seen_at:.2f} s")


def soak(db: TestDatabase, schema: str, work: Path, seconds: float) -> None:
    with proxy_to(db.url) as proxy:
        team = make_machines(db, schema, work / "soak", proxy.url(db.url))
        for machine in team:  # leases that a loaded machine's pass outlives now and then, not at every pass
            machine.extra.update({"LCM_SYNC_LEASE_TTL_S": "3", "LCM_SYNC_CLAIM_TTL_S": "3"})
        stop = threading.Event()
        captured = {m.name: 0 for m in team}
        poison = 0

        def produce(machine: Machine) -> None:
            rng = random.Random(machine.name)
            while not stop.is_set():
                n = rng.randint(1, 5)
                _capture(machine, n, f"{machine.name}-{int(time.time()) % 10}")
                captured[machine.name] += n
                time.sleep(rng.uniform(0.02, 0.2))

        def drain(machine: Machine) -> None:
            worker = Worker(machine)
            try:
                while not stop.is_set():
                    try:
                        worker.worker.run_once()
                    except LcmError:
                        time.sleep(0.2)  # an outage: nothing is lost, try again
            finally:
                worker.close()

        threads = [threading.Thread(target=fn, args=(m,)) for m in team for fn in (produce, drain, drain)]
        for thread in threads:
            thread.start()
        cuts = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            time.sleep(2.0)
            proxy.stop()
            cuts += 1
            time.sleep(1.5)
            proxy.start()
            team[cuts % 2].capture(1, poison=True)
            poison += 1
        stop.set()
        for thread in threads:
            thread.join(60)
        settle_by = time.monotonic() + 120
        while time.monotonic() < settle_by:  # settle: retries come due, the poison events are quarantined
            for machine in team:
                worker = Worker(machine)
                try:
                    worker.worker.drain()
                finally:
                    worker.close()
            if all(e.delivery in ("remote_pruned", "quarantined") for m in team for e in m.events()):
                break
            time.sleep(0.3)
        total = sum(captured.values()) + poison
        applied = len(log_rows(db, schema))
        check_invariants(db, schema, team, final=True)
        print(f"soak {seconds:.0f} s, {cuts} outages: {total} events captured, {applied} applied once each in "
              f"per-machine order, {total - applied} quarantined ({poison} poison); invariants held")


def main(quick: bool) -> None:
    try:
        db = database_or_unavailable()  # as the tests: the server answers and has pg_trgm
    except Unavailable as exc:
        print(f"skipped: {exc}")
        return
    logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)  # the outages' reconnection noise
    with tempfile.TemporaryDirectory(prefix="lcm-bench-sync-") as tmp:
        with db.fresh_schema() as schema:
            catch_up(db, schema, Path(tmp), 1_000 if quick else 10_000)
        with db.fresh_schema() as schema:
            soak(db, schema, Path(tmp), 8.0 if quick else 60.0)


if __name__ == "__main__":
    import sys

    main(quick="--quick" in sys.argv)
