"""Two machines, two daemons, one PostgreSQL project on a server of the test's own (never the shared one):
hooks fire on both while transcripts grow and the server is **stopped** for a while; afterwards every event
is applied once in per-machine order and pruned, each machine's conversation is found from the other, the
passive learning of both machines' hooks is there (a fix after a failure, files edited together in three
sessions), and the integrity check is clean."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.outbox import Outbox, outbox_path
from tests.daemon.support import DaemonProcess, free_port
from tests.postgres.cluster import Cluster, throwaway
from tests.postgres.support import TestDatabase

from .machines import Machine, check_invariants, dump, log_rows, make_machines

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
OUTAGE_S = 12.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A throwaway server: this test stops it."""
    with throwaway() as made:
        made.stop()  # two daemons and their commands need more than the 30 connections it starts with
        with open(made.data / "postgresql.conf", "a") as conf:
            conf.write("max_connections = 120\n")
        made.start()
        yield made


def _turns(path: Path, session: str, word: str, start: int) -> None:
    """Two more turns (user, assistant) of a Claude Code transcript mentioning ``word``."""
    records = []
    for n, role in enumerate(("user", "assistant"), start=start):
        content = f"turn {n}: the {word} deployment needs a second look" if role == "user" else \
            [{"type": "text", "text": f"Checked the {word} deployment (turn {n})."}]
        records.append({"type": role, "sessionId": session, "uuid": f"{session}-{n}", "cwd": str(path.parent),
                        "timestamp": f"2025-10-14T14:0{n}:00.000Z", "message": {"role": role, "content": content}})
    with path.open("a", encoding="utf-8") as out:
        out.writelines(json.dumps(r) + "\n" for r in records)


def _hook(machine: Machine, event: str, transcript: Path, session: str | None = None, **fields: object) -> None:
    """``lcm hook EVENT`` as the agent runs it (its own process, the hook input on stdin)."""
    body = {"session_id": session or f"{machine.name}-session", "transcript_path": str(transcript),
            "cwd": str(machine.root), "hook_event_name": event, **fields}
    done = machine.lcm("hook", event, env={"LCM_DAEMON_AUTOSTART": "false"}, input_text=json.dumps(body))
    assert done.returncode == 0 and "Traceback" not in done.stderr, dump(done)


def _edit(machine: Machine, transcript: Path, session: str | None = None) -> None:
    _hook(machine, "PostToolUse", transcript, session, tool_name="MultiEdit",
          tool_input={"file_path": str(machine.root / "deploy.py"),
                      "edits": [{"file_path": str(machine.root / "deploy.py")},
                                {"file_path": str(machine.root / "settings.py")}]},
          tool_response={"success": True})


def _bash(machine: Machine, transcript: Path, command: str, code: int, stderr: str = "") -> None:
    _hook(machine, "PostToolUse", transcript, tool_name="Bash", tool_input={"command": command},
          tool_response={"exit_code": code, "stderr": stderr})


def _settled(machine: Machine) -> bool:
    events = machine.events()
    return bool(events) and all(e.delivery == "remote_pruned" and e.processed_at is not None for e in events)


def _memories(machine: Machine, tag: str) -> list[dict[str, object]]:
    found = machine.lcm("memory", "list", "--tag", tag, "--json")
    assert found.returncode == 0, dump(found)
    listed = json.loads(found.stdout)
    return list(listed["memories"] if isinstance(listed, dict) else listed)


def test_two_daemons_sync_through_a_stopped_server(cluster: Cluster, tmp_path: Path) -> None:
    db = TestDatabase(cluster.url())
    schema = "lcm_team"
    team = make_machines(db, schema, tmp_path, db.url)
    daemons = []
    for machine in team:
        machine.extra.update({"LCM_DAEMON_PORT": str(free_port()), "LCM_SYNC_LEASE_TTL_S": "5",
                              "LCM_SYNC_CLAIM_TTL_S": "5"})
        daemons.append(DaemonProcess(machine.home, int(machine.extra["LCM_DAEMON_PORT"]), env=machine.env))
    a, b = team
    try:
        for daemon in daemons:
            daemon.start(timeout=60)
        transcripts = {m.name: m.root / f"{m.name}-session.jsonl" for m in team}
        for machine in team:
            _turns(transcripts[machine.name], f"{machine.name}-session", f"zebra{machine.name}", 0)
            _hook(machine, "Stop", transcripts[machine.name])
            _edit(machine, transcripts[machine.name])
        cluster.stop()  # PostgreSQL down while both machines keep working
        stopped = time.monotonic()
        for machine in team:
            _turns(transcripts[machine.name], f"{machine.name}-session", f"quokka{machine.name}", 2)
            _bash(machine, transcripts[machine.name], f"make deploy-{machine.name}", 2,
                  f"make: *** No rule to make target 'deploy-{machine.name}'.  Stop.")
            _bash(machine, transcripts[machine.name], f"make -f ci.mk deploy-{machine.name}", 0)
            _hook(machine, "Stop", transcripts[machine.name])
        _edit(a, transcripts["a"], "a-review")  # a third session editing both files
        time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped)))
        assert not any(_settled(m) for m in team)  # nothing lost, nothing done while it was away
        cluster.start()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not all(_settled(m) for m in team):
            time.sleep(0.3)
        assert all(_settled(m) for m in team), [(e.event, e.delivery, e.processed_at, e.last_error)
                                                for m in team for e in m.events()]
    finally:
        for daemon in daemons:
            daemon.stop()
    check_invariants(db, schema, team, final=True)
    assert len(log_rows(db, schema)) == sum(len(m.events()) for m in team) == 11
    for machine in team:  # each machine's conversation, from the other machine, and both machines' fixes
        other = next(m for m in team if m is not machine)
        found = machine.lcm("grep", f"quokka{other.name}")
        assert found.returncode == 0 and f"quokka{other.name}" in found.stdout, dump(found)
        assert len(_memories(machine, "fix")) == 2
    fixes = {str(m["content"]): json.loads(str(m["metadata"])) for m in _memories(a, "fix")}
    assert len(fixes) == 2, fixes
    for machine in team:
        uuids = [e.uuid for e in machine.events() if e.event == "PostToolUse" and "Bash" in json.dumps(e.payload)]
        (content,) = [c for c in fixes if f"deploy-{machine.name}`" in c]
        assert content.startswith(f"After `make deploy-{machine.name}` failed (make: *** No rule")
        assert fixes[content]["events"] == uuids  # lineage: the failing event, then the one that fixed it
    (co_edit,) = _memories(b, "co-edit")
    assert co_edit["content"] == ("deploy.py and settings.py are usually changed together (3 sessions across "
                                  "the team edited both)")
    edits = {e.uuid for m in team for e in m.events() if "MultiEdit" in json.dumps(e.payload)}
    assert set(json.loads(str(co_edit["metadata"]))["events"]) <= edits
    factory = db.factory(schema, tmp_path / "checker")
    try:
        checked = factory.check_integrity()
    finally:
        factory.close()
    assert checked and all(h.ok for h in checked), checked
    with Outbox(outbox_path(a.home)) as box:
        assert box.prune_processed(older_than_s=0) == 6  # delivered, applied, pruned: retention may go
