"""``lcm sync replay ID`` applies a quarantined event exactly once: one quarantined here before delivery
(its project's scrubber did not build) and one the inbox quarantined (its application failed); the
invariants hold after each."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lcm_framework.errors import DataValidationError
from lcm_framework.outbox import Outbox, outbox_path
from lcm_framework.sync import worker as worker_module
from lcm_framework.sync.replay import replay
from tests.postgres.support import TestDatabase

from .machines import check_invariants, dump, inbox_rows, log_rows, make_machines
from .test_worker import worker_for


def test_an_event_quarantined_before_delivery_is_replayed_at_the_end_of_the_sequence_and_applied_once(
        pg: TestDatabase, pg_schema: str, tmp_path: Path) -> None:
    team = make_machines(pg, pg_schema, tmp_path, pg.url)
    a = team[0]
    a.extra.update({"LCM_SYNC_MAX_ATTEMPTS": "2", "LCM_SYNC_LEASE_TTL_S": "20"})  # a scrubber build outlasts 1 s
    patterns = a.root / ".lcm" / "sensitive-patterns.txt"
    patterns.parent.mkdir()
    patterns.write_text("(unclosed\n")  # the project's scrubber cannot be built: a command cannot be sent
    a.capture(1)
    with Outbox(outbox_path(a.home)) as box:
        command = box.capture("PostToolUse", {"session_id": "a-s", "project": str(a.root), "agent": "claude",
                                              "tool_facts": {"tool": "Bash", "status": "exit 1",
                                                             "command": "make deploy", "error": "no target"}})
    a.capture(2)  # edits: nothing to scrub, deliverable
    first = a.lcm("sync", "drain")
    assert first.returncode == 0 and f"event {command.seq} not delivered" in first.stdout, dump(first)
    assert len(log_rows(pg, pg_schema)) == 1, dump(first)  # the prefix waits for the failing event's retry
    time.sleep(1.1)  # its first delivery retry comes due
    second = a.lcm("sync", "drain")
    assert second.returncode == 0 and "quarantined here" in second.stdout, dump(second)
    assert len(log_rows(pg, pg_schema)) == 3  # quarantined, it no longer blocks the events after it
    (kept,) = [e for e in a.events() if e.uuid == command.uuid]
    assert kept.delivery == "quarantined" and kept.delivered_at is None and kept.delivery_error == "ScrubberError"
    assert command.uuid not in inbox_rows(pg, pg_schema)
    listed = json.loads(a.lcm("sync", "quarantine", "list", "--json").stdout)
    assert [(q["event_uuid"], q["reason"]) for q in listed["local"]] == [(command.uuid, "ScrubberError")]
    check_invariants(pg, pg_schema, team, final=True)

    patterns.write_text("deploy-token-[0-9]+\n")  # fixed
    replayed = a.lcm("sync", "replay", command.uuid.upper(), "--json")
    assert replayed.returncode == 0, dump(replayed)
    answer = json.loads(replayed.stdout)
    newest = max(e.seq for e in a.events() if e.uuid != command.uuid)
    assert answer["where"] == "outbox" and answer["state"] == "pending" and answer["seq"] > newest
    assert a.lcm("sync", "drain").returncode == 0
    log = log_rows(pg, pg_schema)
    assert [u for u, _m, _s, _o in log].count(command.uuid) == 1 and log[-1][0] == command.uuid
    assert log[-1][2] == answer["seq"]  # delivered as the machine's newest sequence: per-machine order holds
    check_invariants(pg, pg_schema, team, final=True)
    again = a.lcm("sync", "replay", command.uuid)
    assert again.returncode != 0 and "Traceback" not in again.stderr, dump(again)
    assert [u for u, _m, _s, _o in log_rows(pg, pg_schema)].count(command.uuid) == 1


def test_an_event_naming_no_project_stays_quarantined(pg: TestDatabase, pg_schema: str, tmp_path: Path) -> None:
    team = make_machines(pg, pg_schema, tmp_path, pg.url)
    a = team[0]
    with Outbox(outbox_path(a.home)) as box:
        lost = box.capture("PostToolUse", {"session_id": "a-s", "cwd": "relative/dir"})
    a.capture(1)
    assert a.lcm("sync", "drain").returncode == 0
    refused = a.lcm("sync", "replay", lost.uuid)
    assert refused.returncode != 0 and "names no project" in refused.stderr, dump(refused)
    assert [e.delivery for e in a.events()] == ["quarantined", "remote_pruned"]
    check_invariants(pg, pg_schema, team, final=True)


def test_an_event_the_inbox_quarantined_is_replayed_exactly_and_applied_once(
        pg: TestDatabase, pg_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    team = make_machines(pg, pg_schema, tmp_path, pg.url)
    a, b = team
    a.extra["LCM_SYNC_MAX_ATTEMPTS"] = "1"
    events = a.capture(3)
    unreadable = events[1].uuid
    real = worker_module.effect_of

    def older_lcm(claim: object) -> object:  # as a worker whose LCM cannot read this event's payload yet
        if getattr(claim, "event_uuid", None) == unreadable:
            raise DataValidationError("unsupported", backend="sync", domain="passive_events", code="unsupported")
        return real(claim)  # type: ignore[arg-type]

    monkeypatch.setattr(worker_module, "effect_of", older_lcm)
    with worker_for(a) as wa:
        report = wa.drain()
    assert report.applied == 2 and report.quarantined == 1
    assert inbox_rows(pg, pg_schema)[unreadable][0] == "quarantined"
    monkeypatch.setattr(worker_module, "effect_of", real)  # upgraded: it reads the payload now
    with worker_for(b) as wb:  # the operator replays from the other machine: the inbox holds it
        done = replay(b.home, wb.projects, [str(b.root)], unreadable)
        assert done.where == "inbox" and done.state == "pending" and done.seq == events[1].seq
        assert wb.drain().applied == 1
    with worker_for(a) as wa:
        settled = wa.drain()
    assert settled.acknowledged == 1 and settled.pruned == 1
    log = log_rows(pg, pg_schema)
    assert sorted(u for u, _m, _s, _o in log) == sorted(e.uuid for e in events)  # each once
    check_invariants(pg, pg_schema, team, final=True, replayed={unreadable})
