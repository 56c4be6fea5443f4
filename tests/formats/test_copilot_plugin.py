"""The contrib GitHub Copilot CLI plugin: its format on an event log Copilot CLI 1.0.102 wrote, ``lcm import`` of
its default location, ``lcm install copilot`` / ``uninstall``, and its hooks run the way Copilot CLI runs them
(the command line of ``hooks/lcm.json`` through the shell, Copilot's hook JSON on stdin)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lcm_framework.outbox import read_backlog
from lcm_framework.storage.models import PartKind, Role
from lcm_framework.transcripts.contracts import AGENT_SCAFFOLDING, LCM_CONTEXT
from lcm_framework.transcripts.format_helpers import prompt_sha256
from tests.conftest import CLAUDE_SAMPLE, OFFLINE_ENV, run_lcm
from tests.contrib import CONTRIB, install_target
from tests.daemon.support import DaemonProcess, free_port

from .helpers import read_jsonl, unpaired_calls

PACKAGE = CONTRIB / "lcm-format-copilot"
SAMPLE = PACKAGE / "samples" / "events.jsonl"
SESSION = "66481182-38be-4bc2-a1f8-aba31156ae83"
SUBAGENT = "c37bac4a-26b5-490d-9e90-eb1f227c874d"
EVENTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "PreCompact": 10, "PostToolUse": 5}
USER_MCP = {"mcpServers": {"docs": {"tools": ["*"], "type": "local", "command": "npx", "args": ["-y", "docs-mcp"]}}}


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_copilot_format_under_test", PACKAGE / "lcm_format_copilot" /
                                                  "format.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORMAT: Any = _load().FORMAT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_target(tmp_path_factory.mktemp("contrib") / "site", "lcm-format-copilot")


def test_the_event_log_copilot_wrote_maps_to_its_two_runs() -> None:
    records = read_jsonl(SAMPLE)
    assert FORMAT.sniff(records[:5]) and not FORMAT.sniff(read_jsonl(CLAUDE_SAMPLE)[:5])
    mapped = [FORMAT.map_record(r) for r in records]
    assert (mapped[0].session_id, mapped[0].cwd) == (SESSION, "/home/dev/demo")
    for record, m in zip(records, mapped, strict=True):
        assert (m.subagent.agent_id if m.subagent else None) == record.get("agentId")
        assert m.metadata["recordType"] == record["type"] and m.metadata["id"] == record["id"]
        assert (m.kind == AGENT_SCAFFOLDING) == (record["type"] == "system.message")
    main = [m.message for m in mapped if m.message and m.subagent is None]
    run = [m.message for m in mapped if m.message and m.subagent is not None]
    assert [m.role for m in main] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert [m.role for m in run] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert main[0].content == "delegate it"  # what was typed, not the timestamped model view
    assert "sub-agent-marker" in run[2].content and unpaired_calls(main + run) == (set(), set())
    (task,) = [p for p in main[1].parts if p.kind is PartKind.TOOL_CALL]
    spawn = FORMAT.spawn(task)
    assert spawn.tool_call_id == "call_0001" and spawn.agent_type == "task"
    assert spawn.prompt_sha256 == prompt_sha256(run[0].content)  # how the run is linked to its call


def test_failures_contexts_and_attachments() -> None:
    failed = FORMAT.map_record({"type": "tool.execution_complete", "id": "e", "timestamp": "2026-01-01T00:00:00Z",
                                "data": {"toolCallId": "c9", "success": False,
                                         "error": {"message": "permission denied", "code": "denied"}}})
    (part,) = failed.message.parts
    assert part.is_error and part.text == "permission denied" and part.tool_call_id == "c9"
    restored = FORMAT.map_record({"type": "user.message", "id": "u", "data": {
        "content": "# Restored context (LCM)\nLCM keeps every message..."}})
    assert restored.kind == LCM_CONTEXT and restored.message is None
    skill = FORMAT.map_record({"type": "user.message", "id": "s", "data": {"content": "x", "source": "skill-pdf"}})
    assert skill.kind == AGENT_SCAFFOLDING and skill.message is None
    attached = FORMAT.map_record({"type": "user.message", "id": "a", "data": {"content": "see", "attachments": [
        {"type": "file", "path": "/p/a.png", "mimeType": "image/png"}, {"type": "file", "path": "/p/b.txt"}]}})
    assert [p.kind for p in attached.message.parts] == [PartKind.TEXT, PartKind.IMAGE, PartKind.FILE]
    assert FORMAT.map_record(["odd"]).message is None and FORMAT.map_record({"type": "abort"}).message is None
    assert not FORMAT.sniff([{"type": "user.message", "data": {"content": "x"}}])
    assert FORMAT.default_roots({"COPILOT_HOME": "/opt/cp", "HOME": "/h"}) == [Path("/opt/cp/session-state")]
    assert FORMAT.default_roots({"HOME": "/h"}) == [Path("/h/.copilot/session-state")]


def test_lcm_import_finds_copilot_sessions_and_quarantines_a_torn_line(site: Path, lcm_env: Path) -> None:
    home = lcm_env.parent
    target = home / ".copilot" / "session-state" / SESSION / "events.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copy(SAMPLE, target)
    with target.open("a") as fh:
        fh.write('{"type": "assistant.message", "data": {"content": "torn\n')
    project = home / "demo"
    (project / ".git").mkdir(parents=True)
    done = run_lcm("import", "--provider", "copilot", "--project", str(project), "--json",
                   env={"PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files_by_status"] == {"imported": 1} and report["messages"] == 8
    assert sum(report["quarantined"].values()) == 1  # the torn line, nothing else lost
    listed = run_lcm("--project", str(project), "sessions", env={"PYTHONPATH": str(site)})
    assert "1 sessions, 1 sub-agent runs" in listed.stdout and "read README.md and report" in listed.stdout


def test_install_writes_lcms_own_hooks_file_and_uninstall_restores_the_bytes(site: Path, lcm_env: Path) -> None:
    root = lcm_env.parent / ".copilot"
    root.mkdir()
    mcp = root / "mcp-config.json"
    original = json.dumps(USER_MCP, indent=2) + "\n"
    mcp.write_text(original)
    env = {"PYTHONPATH": str(site)}

    dry = run_lcm("install", "copilot", "--dry-run", env=env)
    assert dry.returncode == 0 and "+++ " in dry.stdout and "--protocol lcm_format_copilot.hooks" in dry.stdout
    assert not (root / "hooks").exists() and mcp.read_text() == original

    assert run_lcm("install", "copilot", env=env).returncode == 0
    hooks = json.loads((root / "hooks" / "lcm.json").read_text())
    assert hooks["version"] == 1 and set(hooks["hooks"]) == set(EVENTS)
    for event, timeout in EVENTS.items():
        ((handler,),) = [g["hooks"] for g in hooks["hooks"][event]]
        assert handler["type"] == "command" and handler["timeout"] == timeout
        assert handler["command"].endswith(f"hook {event} --agent copilot --protocol lcm_format_copilot.hooks")
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["docs"] == USER_MCP["mcpServers"]["docs"]
    assert servers["lcm"]["type"] == "local" and servers["lcm"]["args"][-1] == "mcp"
    installed = {p: p.read_bytes() for p in (mcp, root / "hooks" / "lcm.json")}
    again = json.loads(run_lcm("install", "copilot", "--json", env=env).stdout)
    assert [f["changed"] for f in again["files"]] == [False, False]
    assert {p: p.read_bytes() for p in installed} == installed

    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["copilot_hooks"]["status"] == "ok", checks["copilot_hooks"]
    (root / "settings.json").write_text('{"disableAllHooks": true}\n')
    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["copilot_hooks"]["status"] == "fail" and "disableAllHooks" in checks["copilot_hooks"]["detail"]

    assert run_lcm("uninstall", "copilot", env=env).returncode == 0
    assert mcp.read_text() == original and not (root / "hooks").exists()


def copilot_runs(command: str, payload: Mapping[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """What Copilot CLI does with a hook: the command line through the shell, its hook JSON on stdin."""
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def test_the_hooks_copilot_runs_ingest_and_restore(site: Path, lcm_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "demo"
    (project / ".git").mkdir(parents=True)
    transcript = lcm_env.parent / ".copilot" / "session-state" / SESSION / "events.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copy(SAMPLE, transcript)
    port = free_port()
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port),
           "LCM_DAEMON_AUTOSTART": "false", "PYTHONPATH": str(site)}
    assert run_lcm("install", "copilot", env={"PYTHONPATH": str(site)}).returncode == 0
    hooks = json.loads((lcm_env.parent / ".copilot" / "hooks" / "lcm.json").read_text())["hooks"]
    command = {event: groups[0]["hooks"][0]["command"] for event, groups in hooks.items()}
    # the hook JSON Copilot CLI 1.0.102 sends for these event names (snake_case, ISO timestamps)
    stop = {"hook_event_name": "Stop", "session_id": SESSION, "timestamp": "2026-12-01T23:04:13.600Z",
            "cwd": str(project), "transcript_path": str(transcript), "stop_reason": "end_turn",
            "stop_hook_active": False}
    start = {"hook_event_name": "SessionStart", "session_id": "8cd72549-7234-4298-9e0b-c0e29874058b",
             "timestamp": "2026-12-01T23:05:00.000Z", "cwd": str(project), "source": "new",
             "initial_prompt": "what did the sub-agent report?"}
    daemon = DaemonProcess(lcm_env, port, env={"PYTHONPATH": str(site)}).start()
    try:
        assert copilot_runs(command["Stop"], stop, env).stdout == ""
        deadline = time.monotonic() + 60
        while read_backlog(lcm_env).pending and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.1)
        assert read_backlog(lcm_env).pending == 0  # type: ignore[union-attr]
        output = json.loads(copilot_runs(command["SessionStart"], start, env).stdout)
    finally:
        daemon.stop()
    assert set(output) == {"additionalContext"}  # the top-level field Copilot CLI injects
    context = output["additionalContext"]
    assert context.startswith("# Restored context (LCM)")
    # the previous session itself, not its sub-agent's run (stored after it began)
    assert "delegate it" in context and "all done" in context and "sub-agent-marker" not in context
