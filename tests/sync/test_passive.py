"""Passive events: what a PostToolUse hook keeps, its capture into the outbox, and the daemon's local
learning from it; with SQLite nothing is delivered anywhere and retention works as before."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lcm_framework.config import load_config
from lcm_framework.daemon.service import DaemonService
from lcm_framework.outbox import Outbox, outbox_path
from lcm_framework.sync.facts import MAX_TEXT, tool_facts
from lcm_framework.sync.status import SAMPLES_FILE
from tests.conftest import OFFLINE_ENV
from tests.daemon.support import DaemonProcess, free_port

from .machines import plugins


def test_tool_facts_keep_capped_facts_and_never_the_output() -> None:
    failing = tool_facts({"tool_name": "Bash", "tool_input": {"command": "make test " + "x" * 1000},
                          "tool_response": {"exit_code": 2, "stderr": "E   boom " * 200, "stdout": "SECRET OUTPUT"}})
    assert failing is not None and failing["status"] == "exit 2"
    assert len(failing["command"]) == MAX_TEXT and len(failing["error"]) == MAX_TEXT
    assert "SECRET OUTPUT" not in json.dumps(failing)
    edit = tool_facts({"tool_name": "MultiEdit", "tool_input": {"file_path": "/p/a.py", "edits": [
        {"file_path": "/p/a.py"}, {"file_path": "/p/b.py"}]}, "tool_response": {"success": True}})
    assert edit == {"tool": "MultiEdit", "status": "ok", "files": ["/p/a.py", "/p/b.py"]}
    patch = tool_facts({"tool_name": "apply_patch", "tool_input": {
        "command": "*** Begin Patch\n*** Update File: src/x.py\n@@\n*** Add File: src/y.py\n*** End Patch"}})
    assert patch == {"tool": "apply_patch", "status": "ok", "files": ["src/x.py", "src/y.py"]}
    assert tool_facts({"tool_name": "Read", "tool_response": {"is_error": True, "error": "no such file"}}) == {
        "tool": "Read", "status": "error", "error": "no such file"}
    assert tool_facts({"tool_input": {}}) is None


def test_a_post_tool_use_hook_is_captured_in_the_outbox_with_the_daemon_down(tmp_path: Path) -> None:
    home, project = tmp_path / "lcm-home", tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    hook = {"session_id": "s1", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
            "hook_event_name": "PostToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(project / "src/a.py"), "old_string": "SECRET CONTENT"},
            "tool_response": {"filePath": str(project / "src/a.py"), "newString": "MORE CONTENT"}}
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", "PostToolUse"],
                          input=json.dumps(hook), capture_output=True, text=True, timeout=30,
                          env={**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": "9"})
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    with Outbox(outbox_path(home)) as box:
        (event,) = box.events()
    assert event.event == "PostToolUse" and event.payload["project"] == str(project.resolve())
    assert event.payload["tool_facts"] == {"tool": "Edit", "status": "ok", "files": [str(project / "src/a.py")]}
    assert "CONTENT" not in json.dumps(event.payload)
    assert not (home / "daemon.spawn").exists()  # a passive event never starts the daemon


def test_the_daemon_learns_a_fix_after_a_failure_and_sqlite_delivers_nothing(lcm_env: Path, tmp_path: Path) -> None:
    project = (tmp_path / "proj").resolve()
    (project / ".git").mkdir(parents=True)
    service = DaemonService(load_config(project=project, plugins=plugins()), plugins())
    with Outbox(outbox_path(service.config.home)) as box:
        def tool(command: str, status: str, error: str | None = None) -> str:
            facts = {"tool": "Bash", "command": command, "status": status, **({"error": error} if error else {})}
            return box.capture("PostToolUse", {"session_id": "s1", "cwd": str(project), "project": str(project),
                                               "tool_facts": facts}).uuid

        failed = tool("pytest tests/test_api.py", "exit 1", "ModuleNotFoundError: No module named 'orders'")
        fixed = tool("pytest -p no:cacheprovider tests/test_api.py --rootdir=.", "ok")
        tool("pytest -p no:cacheprovider tests/test_api.py --rootdir=.", "ok")  # passing again: nothing new

    async def scenario() -> None:
        assert await service.drain_outbox() == 3
        await service.drain.tick()  # SQLite: the team-sync drain switches itself off
        assert service.drain.closing and service.status()["sync"]["running"] is False
        await service.close()

    asyncio.run(scenario())
    app_storage = load_config(project=project, plugins=plugins())
    from lcm_framework.app import App

    app = App(app_storage, plugins())
    try:
        with app.project(project) as storage:
            (memory,) = storage.promoted_memory.list_memories(tag="fix")
    finally:
        app.close()
    assert "pytest tests/test_api.py" in memory.content and "ModuleNotFoundError" in memory.content
    assert json.loads(memory.metadata or "{}")["events"] == [failed, fixed]
    with Outbox(outbox_path(service.config.home)) as box:
        assert {e.delivery for e in box.events()} == {"local_only"}  # never delivered: there is no inbox
        assert box.prune_processed(older_than_s=0) == 3  # retention as before for a solo user


def test_a_post_tool_use_command_or_error_never_reaches_the_outbox_file_with_a_token_in_clear(
        tmp_path: Path) -> None:
    home, project = tmp_path / "lcm-home", tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    secrets = ["ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", "AKIA" + "QX7T2ME4KZ9BL5NW",
               "xoxb-" + "2754129851-9314762850-Zk39Qm8Wx2Lr7Tn5Vb1Hc6Jd",
               "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJkZXBsb3kifQ.Zk39Qm8Wx2Lr7Tn5Vb1Hc6JdPq4",
               "q8Zr2Lm5Xw9Tn3Vb7Hc1Jd6Kp4Fs0Gy"]  # a long high-entropy word: no known prefix at all
    command = f"curl -H 'Authorization: token {secrets[0]}' --user {secrets[1]} https://api.example/{secrets[4]}"
    error = f"401: bad credentials {secrets[2]} for {secrets[3]}"
    hook = {"session_id": "s1", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": command},
            "tool_response": {"exit_code": 1, "stderr": error}}
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", "PostToolUse"],
                          input=json.dumps(hook), capture_output=True, text=True, timeout=30,
                          env={**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": "9"})
    assert done.returncode == 0, done.stderr
    with Outbox(outbox_path(home)) as box:
        (event,) = box.events()
    facts = event.payload["tool_facts"]
    assert facts["command"].startswith("curl -H 'Authorization: token [REDACTED:") and " --user [REDACTED:" \
        in facts["command"] and facts["error"].startswith("401: bad credentials [REDACTED:")
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())  # the outbox and its WAL
    for secret in secrets:
        assert secret.encode() not in stored, secret


def test_a_solo_user_on_sqlite_learns_a_fix_and_co_edits_through_real_hooks_with_no_team_configuration(
        tmp_path: Path) -> None:
    home, project = tmp_path / "lcm-home", (tmp_path / "proj").resolve()
    (project / ".git").mkdir(parents=True)
    port = free_port()
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": str(port),
           "LCM_DAEMON_AUTOSTART": "false"}

    def lcm(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], input=stdin, cwd=project,
                              capture_output=True, text=True, timeout=60, env=env)

    def bash(command: str, code: int, stderr: str = "") -> None:
        hook = {"session_id": "s1", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
                "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                "tool_response": {"exit_code": code, "stderr": stderr}}
        done = lcm("hook", "PostToolUse", stdin=json.dumps(hook))
        assert done.returncode == 0 and done.stderr == "", done.stderr

    def edit(session: str) -> None:
        hook = {"session_id": session, "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
                "hook_event_name": "PostToolUse", "tool_name": "MultiEdit",
                "tool_input": {"file_path": str(project / "api.py"), "edits": [
                    {"file_path": str(project / "api.py")}, {"file_path": str(project / "schema.py")}]},
                "tool_response": {"success": True}}
        done = lcm("hook", "PostToolUse", stdin=json.dumps(hook))
        assert done.returncode == 0 and done.stderr == "", done.stderr

    daemon = DaemonProcess(home, port).start(timeout=60)
    try:
        bash("pytest tests/test_api.py", 1, "E   ModuleNotFoundError: No module named 'orders'")
        bash("pytest --import-mode=importlib tests/test_api.py", 0)
        for session in ("s1", "s2", "s1", "s3"):  # the two files edited together in three sessions
            edit(session)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with Outbox(outbox_path(home)) as box:
                events = box.events()
            if all(e.processed_at is not None for e in events):
                break
            time.sleep(0.2)
    finally:
        daemon.stop()
    assert {e.delivery for e in events} == {"local_only"} and len(events) == 6  # nothing will ever leave
    listed = lcm("memory", "list", "--tag", "fix", "--json")
    (memory,) = json.loads(listed.stdout)["memories"]
    assert memory["content"].startswith("After `pytest tests/test_api.py` failed (E   ModuleNotFoundError")
    assert memory["content"].endswith("`pytest --import-mode=importlib tests/test_api.py` worked.")
    assert json.loads(memory["metadata"])["events"] == [e.uuid for e in events[:2]]  # lineage: both hook events
    (co_edit,) = json.loads(lcm("memory", "list", "--tag", "co-edit", "--json").stdout)["memories"]
    assert co_edit["content"] == "api.py and schema.py are usually changed together (3 sessions edited both)"
    assert json.loads(co_edit["metadata"])["events"] == [events[-1].uuid]  # the edit that made it three
    status = json.loads(lcm("sync", "status", "--json").stdout)
    assert status["verdict"] == "solo" and status["local"]["by_state"] == {"local_only": 6}
    assert json.loads(lcm("status", "--json").stdout)["sync"]["verdict"] == "solo"
    (check,) = [c for c in json.loads(lcm("doctor", "--json").stdout)["checks"] if c["name"] == "sync"]
    assert check["status"] == "ok" and "local only" in check["detail"]
    drained = lcm("sync", "drain")
    assert drained.returncode != 0 and "storage.backend = postgresql" in drained.stderr
    assert "Traceback" not in drained.stderr
    assert not (home / SAMPLES_FILE).exists() and not list(home.glob("*.toml"))  # no team state, no set-up
