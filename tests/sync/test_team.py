"""Two machines, two daemons, one PostgreSQL project: hooks fire on both while transcripts grow and the server
is cut off for a while; afterwards every event is applied once in per-machine order and pruned, each
machine's conversation is found from the other, and the integrity check is clean."""

from __future__ import annotations

import json
import time
from pathlib import Path

from lcm_framework.outbox import Outbox, outbox_path
from tests.daemon.support import DaemonProcess, free_port
from tests.postgres.support import TestDatabase

from .machines import Machine, check_invariants, dump, log_rows, make_machines, proxy_to


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


def _hook(machine: Machine, event: str, transcript: Path, **fields: object) -> None:
    body = {"session_id": f"{machine.name}-session", "transcript_path": str(transcript), "cwd": str(machine.root),
            "hook_event_name": event, **fields}
    done = machine.lcm("hook", event, env={"LCM_DAEMON_AUTOSTART": "false"}, input_text=json.dumps(body))
    assert done.returncode == 0 and "Traceback" not in done.stderr, dump(done)


def _settled(machine: Machine) -> bool:
    events = machine.events()
    return bool(events) and all(e.delivery == "remote_pruned" and e.processed_at is not None for e in events)


def test_two_daemons_sync_through_an_outage(pg: TestDatabase, pg_schema: str, tmp_path: Path) -> None:
    with proxy_to(pg.url) as proxy:
        team = make_machines(pg, pg_schema, tmp_path, proxy.url(pg.url))
        daemons = []
        for machine in team:
            machine.extra.update({"LCM_DAEMON_PORT": str(free_port()), "LCM_SYNC_LEASE_TTL_S": "5",
                                  "LCM_SYNC_CLAIM_TTL_S": "5"})
            daemons.append(DaemonProcess(machine.home, int(machine.extra["LCM_DAEMON_PORT"]), env=machine.env))
        try:
            for daemon in daemons:
                daemon.start(timeout=60)
            transcripts = {m.name: m.root / f"{m.name}-session.jsonl" for m in team}
            for machine in team:
                _turns(transcripts[machine.name], f"{machine.name}-session", f"zebra{machine.name}", 0)
                _hook(machine, "Stop", transcripts[machine.name])
                _hook(machine, "PostToolUse", transcripts[machine.name], tool_name="Edit",
                      tool_input={"file_path": str(machine.root / "deploy.py")}, tool_response={"success": True})
            proxy.stop()  # PostgreSQL unreachable while both machines keep working
            for machine in team:
                _turns(transcripts[machine.name], f"{machine.name}-session", f"quokka{machine.name}", 2)
                _hook(machine, "PostToolUse", transcripts[machine.name], tool_name="Bash",
                      tool_input={"command": "make deploy"}, tool_response={"exit_code": 0})
                _hook(machine, "Stop", transcripts[machine.name])
            time.sleep(2)
            assert not any(_settled(m) for m in team)  # nothing lost, nothing done while it was away
            proxy.start()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not all(_settled(m) for m in team):
                time.sleep(0.3)
            assert all(_settled(m) for m in team), [(e.event, e.delivery, e.processed_at) for m in team
                                                    for e in m.events()]
        finally:
            for daemon in daemons:
                daemon.stop()
        check_invariants(pg, pg_schema, team, final=True)
        assert len(log_rows(pg, pg_schema)) == sum(len(m.events()) for m in team) == 8
        for machine in team:  # each machine's conversation, from the other machine
            other = next(m for m in team if m is not machine)
            found = machine.lcm("grep", f"quokka{other.name}")
            assert found.returncode == 0 and f"quokka{other.name}" in found.stdout, dump(found)
        factory = pg.factory(pg_schema, tmp_path / "checker")
        try:
            checked = factory.check_integrity()
        finally:
            factory.close()
        assert checked and all(h.ok for h in checked), checked
        with Outbox(outbox_path(team[0].home)) as box:
            assert box.prune_processed(older_than_s=0) == 4  # delivered, applied, pruned: retention may go
