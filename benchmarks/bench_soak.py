"""Soak: many LCM processes on one project for minutes (``tests/multiprocess/torture.py``), SQLite and
PostgreSQL. Prints operations per second, p95 latency per operation kind against the same operation run
alone on the final store (the baseline), and the lost and damaged record counts, which must be 0.

Full run: 10 minutes per backend with 8 chaos processes at once; ``--quick``: 1 minute, 4 at once.
PostgreSQL runs when LCM_TEST_POSTGRES_URL (or the local server) is reachable.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.multiprocess.torture import Plan, Run
from tests.postgres.support import Unavailable, database_or_unavailable


def _soak(label: str, plan: Plan) -> int:
    with tempfile.TemporaryDirectory(prefix="lcm-soak-") as tmp:
        run = Run(Path(tmp), plan)
        started = time.monotonic()
        run.execute()
        elapsed = time.monotonic() - started
        problems = run.verify()
        solo = run.solo_latencies()
        ops = sum(len(v) for v in run.stats.latencies.values())
        print(f"{label}: {ops} operations in {elapsed:.0f} s ({ops / elapsed:.2f}/s), "
              f"{sum(run.stats.killed.values())} processes SIGKILLed, seed {plan.seed}")
        print(f"  {'operation':<20}{'count':>7}{'killed':>8}{'p95 s':>9}{'alone p95 s':>13}{'ratio':>8}")
        for kind in sorted(run.stats.latencies):
            p95 = run.stats.p95(kind)
            alone = solo.get(kind)
            ratio = f"{p95 / alone:.1f}x" if alone else "-"
            print(f"  {kind:<20}{len(run.stats.latencies[kind]):>7}{run.stats.killed.get(kind, 0):>8}"
                  f"{p95:>9.3f}{(f'{alone:.3f}' if alone else '-'):>13}{ratio:>8}")
        print(f"  lost records: {run.lost}; damaged databases: {run.damaged}; "
              f"deleted files held: {len(run.monitor.violations)}  (target: 0, 0, 0)")
        for problem in problems:
            print(f"  PROBLEM: {problem}")
        return len(problems)


def main(quick: bool = False) -> None:
    duration, parallel = (60.0, 4) if quick else (600.0, 8)
    chunks = 12 if quick else 60
    failures = _soak("sqlite", Plan(duration_s=duration, parallel=parallel, chunks=chunks, daemon_kills=4))
    try:
        db = database_or_unavailable()
    except Unavailable as exc:
        print(f"postgresql: skipped ({exc})")
    else:
        with db.fresh_schema() as schema:
            failures += _soak("postgresql", Plan(duration_s=duration, parallel=parallel, chunks=chunks,
                                                 daemon_kills=4, postgres={"url": db.url, "schema": schema}))
    if failures:
        sys.exit(f"soak: {failures} invariant(s) broken")
