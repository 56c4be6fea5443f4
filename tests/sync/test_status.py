"""What operators see: ``lcm sync status`` per state and machine, a stuck or growing backlog in ``lcm status`` and
``lcm doctor``, the quarantine list and an exact replay from the command line."""

from __future__ import annotations

import json
import time
from pathlib import Path

from lcm_framework.outbox import Outbox, outbox_path
from lcm_framework.sync.status import SAMPLES_FILE
from tests.postgres.support import TestDatabase

from .machines import dump, make_machines


def test_operators_see_a_stuck_then_growing_backlog_and_replay_a_quarantined_event(
        pg: TestDatabase, pg_schema: str, tmp_path: Path) -> None:
    a, b = make_machines(pg, pg_schema, tmp_path, pg.url)
    a.extra["LCM_SYNC_STUCK_AFTER_S"] = "60"
    with Outbox(outbox_path(a.home)) as box:  # captured two minutes ago, while nothing drained
        for n in range(2):
            box.capture("PostToolUse", {"session_id": "a-s", "project": str(a.root), "n": n,
                                        "tool_facts": {"tool": "Edit", "status": "ok", "files": [str(a.root / "x")]}},
                        now=time.time() - 120)
    status = a.lcm("status", "--json")
    assert status.returncode == 0, dump(status)
    assert json.loads(status.stdout)["sync"]["verdict"] == "stuck"
    doctor = a.lcm("doctor", "--json")
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "sync"]
    assert check["status"] == "warn" and "stuck" in check["detail"], check

    a.extra["LCM_SYNC_STUCK_AFTER_S"] = "100000"
    (a.home / SAMPLES_FILE).write_text(json.dumps([[time.time() - 60, 1]]))  # a look a minute ago: 1 waiting
    growing = json.loads(a.lcm("sync", "status", "--json").stdout)
    assert growing["verdict"] == "growing" and growing["local"]["by_state"] == {"pending": 2}
    assert json.loads(a.lcm("status", "--json").stdout)["sync"]["verdict"] == "growing"
    (check,) = [c for c in json.loads(a.lcm("doctor", "--json").stdout)["checks"] if c["name"] == "sync"]
    assert check["status"] == "warn" and "growing" in check["detail"], check

    b.extra["LCM_SYNC_MAX_ATTEMPTS"] = "1"
    b.capture(1, poison=True)
    assert b.lcm("sync", "drain").returncode == 0
    drained = a.lcm("sync", "drain", "--json")
    assert drained.returncode == 0, dump(drained)
    text = a.lcm("sync", "status")
    assert "sync:     ok" in text.stdout and "quarantined" in text.stdout, dump(text)
    assert f"machine {b.events()[0].machine_id}: 1 quarantined" in text.stdout  # per machine, by state
    doctor = a.lcm("doctor", "--json")
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "sync"]
    assert check["status"] == "warn" and "1 event(s) quarantined" in check["detail"], check

    listed = json.loads(b.lcm("sync", "quarantine", "list", "--json").stdout)
    (poison,) = listed["inbox"]
    assert poison["reason"] == "payload_shape" and poison["attempts"] == 1
    replayed = b.lcm("sync", "replay", poison["event_uuid"], "--json")
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["state"] == "pending", dump(replayed)
    (local,) = [e for e in b.events() if e.uuid == poison["event_uuid"]]
    assert local.delivery == "delivered"  # waiting for its application again
    again = b.lcm("sync", "replay", poison["event_uuid"])
    assert again.returncode != 0 and "pending, not quarantined" in again.stderr and "Traceback" not in again.stderr
    bad = b.lcm("sync", "replay", "not-a-uuid")
    assert bad.returncode != 0 and "uuid" in bad.stderr and "Traceback" not in bad.stderr
