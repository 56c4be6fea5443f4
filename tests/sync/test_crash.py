"""Drain workers SIGKILLed at every durable checkpoint, on two machines sharing one project: after each crash
the invariants hold, and the next worker finishes the job (``lcm sync drain`` and forked worker processes)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from lcm_framework.sync.killpoints import CHECKPOINTS, ENV
from tests.postgres.support import TestDatabase

from .machines import FAST_SYNC, check_invariants, drain_in_child, dump, killed, log_rows, make_machines


def test_a_worker_killed_at_each_checkpoint_loses_and_repeats_nothing(pg: TestDatabase, pg_schema: str,
                                                                      tmp_path: Path) -> None:
    team = make_machines(pg, pg_schema, tmp_path, pg.url)
    b = team[1]
    captured = 0
    died = 0.0
    expiry = max(float(FAST_SYNC["sync.lease_ttl_s"]), float(FAST_SYNC["sync.claim_ttl_s"])) + 0.2
    for number, checkpoint in enumerate(CHECKPOINTS):
        for machine in team:
            machine.capture(2, session=f"round{number}", poison=(number == 3 and machine is b))
            captured += 2
            time.sleep(max(0.0, died + expiry - time.monotonic()))  # the killed worker's lease and claims expired
            if number == 0:  # through the command itself once; then forked children (the same worker code)
                done = machine.lcm("sync", "drain", env={ENV: checkpoint})
                assert killed(done), f"{machine.name} not killed at {checkpoint}: {dump(done)}"
            else:
                assert drain_in_child(machine, checkpoint) == -signal.SIGKILL, f"{machine.name} at {checkpoint}"
            died = time.monotonic()
            check_invariants(pg, pg_schema, team, final=False)
    time.sleep(expiry)
    for machine in [*team, team[0]]:  # b applies its own last events, a acknowledges what b applied
        assert drain_in_child(machine) == 0
    check_invariants(pg, pg_schema, team, final=True)
    assert len(log_rows(pg, pg_schema)) == captured - 2  # every event once, but the two poison ones
    listed = b.lcm("sync", "quarantine", "list")
    assert listed.returncode == 0 and listed.stdout.count("payload_shape") == 2, dump(listed)
