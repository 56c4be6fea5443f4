"""The contrib Gemini CLI agent integration, installed on its own: ``lcm install gemini`` / ``lcm uninstall
gemini`` in subprocesses with HOME in a temp dir, and Gemini CLI hook payloads through ``lcm hook``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from lcm_framework.outbox import Outbox, outbox_path, read_backlog
from tests.conftest import OFFLINE_ENV, run_lcm
from tests.daemon.support import DaemonProcess, free_port

from .conftest import CONTRIB

SAMPLE = CONTRIB / "samples" / "session-2025-11-03T10-15-4a9c2e1f.jsonl"
SESSION = "4a9c2e1f-6b3d-4e8a-9f1c-2d7b5e0a3c86"
# Gemini CLI's event -> (LCM's event, timeout in milliseconds)
EXPECTED = {"SessionStart": ("SessionStart", 10000), "BeforeAgent": ("UserPromptSubmit", 5000),
            "AfterAgent": ("Stop", 5000), "SessionEnd": ("SessionEnd", 5000), "AfterTool": ("PostToolUse", 5000)}
# No PreCompress: Gemini CLI 0.61 fires it before every turn.
USER_SETTINGS = {
    "ui": {"theme": "GitHub"},
    "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./check.sh"}]}]},
    "mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}},
}


def settings_path(home: Path) -> Path:
    return home / ".gemini" / "settings.json"


def test_install_merges_into_gemini_settings_and_uninstall_restores_the_bytes(site: Path, lcm_env: Path) -> None:
    home = lcm_env.parent
    path = settings_path(home)
    path.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=2) + "\n"
    path.write_text(original)
    env = {"PYTHONPATH": str(site)}

    result = run_lcm("install", "gemini", env=env)
    assert result.returncode == 0, result.stderr
    assert f"installed into {path}" in result.stdout
    settings = json.loads(path.read_text())
    assert settings["ui"] == USER_SETTINGS["ui"]
    assert settings["hooks"]["BeforeTool"] == USER_SETTINGS["hooks"]["BeforeTool"]
    assert set(settings["hooks"]) == {"BeforeTool", *EXPECTED}
    for native, (event, timeout_ms) in EXPECTED.items():
        (group,) = settings["hooks"][native]
        (handler,) = group["hooks"]
        assert handler["type"] == "command" and handler["name"] == "lcm" and handler["timeout"] == timeout_ms
        assert handler["command"].endswith(f"hook {event} --agent gemini --protocol lcm_format_gemini.hooks")
    server = settings["mcpServers"]["lcm"]
    assert set(server) == {"command", "args"} and server["args"][-1] == "mcp"  # stdio: no "type" in Gemini CLI
    assert os.access(server["command"], os.X_OK) or server["command"] == sys.executable
    assert settings["mcpServers"]["docs"] == USER_SETTINGS["mcpServers"]["docs"]
    (backup,) = (lcm_env / "backups").glob("settings.json.*")  # under LCM_HOME, not beside the agent's file
    assert backup.read_text() == original

    installed = path.read_bytes()
    again = run_lcm("install", "gemini", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["files"] == [{"path": str(path), "changed": False, "backup": None, "notes": []}]
    assert path.read_bytes() == installed

    doctor = run_lcm("doctor", "--json", env=env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["gemini_hooks"]["status"] == "ok", checks["gemini_hooks"]

    removed = run_lcm("uninstall", "gemini", env=env)
    assert removed.returncode == 0, removed.stderr
    assert path.read_text() == original


def test_doctor_names_what_keeps_gemini_from_running_the_hooks(site: Path, lcm_env: Path) -> None:
    home = lcm_env.parent
    env = {"PYTHONPATH": str(site)}
    settings_path(home).parent.mkdir()
    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["gemini_hooks"]["status"] == "fail" and checks["gemini_hooks"]["fix"] == "lcm install gemini"
    assert "BeforeAgent" in checks["gemini_hooks"]["detail"]
    assert run_lcm("install", "gemini", env=env).returncode == 0
    settings = json.loads(settings_path(home).read_text())
    settings["hooksConfig"] = {"disabled": ["lcm"]}
    settings_path(home).write_text(json.dumps(settings))
    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["gemini_hooks"]["status"] == "fail"
    assert "hooksConfig.disabled" in checks["gemini_hooks"]["detail"]


def test_gemini_is_an_agent_only_with_the_distribution(site: Path, lcm_env: Path) -> None:
    with_it = run_lcm("install", "--help", env={"PYTHONPATH": str(site)})
    assert with_it.returncode == 0 and "gemini (Gemini CLI)" in with_it.stdout
    assert "gemini" in run_lcm("hook", "--help", env={"PYTHONPATH": str(site)}).stdout
    without = run_lcm("install", "gemini")
    assert without.returncode == 2 and "invalid choice: 'gemini'" in without.stderr
    assert not settings_path(lcm_env.parent).exists()


def gemini_hook(event: str, payload: dict[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """What Gemini CLI runs: the installed command line, its hook JSON on stdin."""
    result = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", event, "--agent", "gemini"],
                            input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result


def test_gemini_hook_payloads_round_trip_through_the_daemon(site: Path, lcm_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "weatherbot"
    (project / ".git").mkdir(parents=True)
    transcript = lcm_env.parent / ".gemini" / "tmp" / "weatherbot" / "chats" / SAMPLE.name
    transcript.parent.mkdir(parents=True)
    shutil.copy(SAMPLE, transcript)
    port = free_port()
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port),
           "LCM_DAEMON_AUTOSTART": "false", "PYTHONPATH": str(site)}
    base = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
            "timestamp": "2025-11-03T10:16:40.000Z"}

    # daemon down: the event waits in the outbox, tagged with the agent; the prompt is never stored
    gemini_hook("UserPromptSubmit", {**base, "hook_event_name": "BeforeAgent", "prompt": "secret plan"}, env)
    with Outbox(outbox_path(lcm_env)) as box:
        (waiting,) = box.events()
    assert waiting.event == "UserPromptSubmit" and waiting.payload["agent"] == "gemini"
    assert waiting.payload["session_id"] == SESSION and "secret plan" not in json.dumps(waiting.payload)

    daemon = DaemonProcess(lcm_env, port, env={"PYTHONPATH": str(site)}).start()
    try:
        stop = gemini_hook("Stop", {**base, "hook_event_name": "AfterAgent", "prompt": "fix it",
                                    "prompt_response": "Fixed.", "stop_hook_active": False}, env)
        assert stop.stdout == ""
        deadline = time.monotonic() + 60
        while read_backlog(lcm_env).pending and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.1)
        assert read_backlog(lcm_env).pending == 0  # type: ignore[union-attr]
        found = run_lcm("--project", str(project), "grep", "--mode", "substring", "--json", "(reading 'temp')")
        assert found.returncode == 0, found.stderr
        assert "Cannot read properties of undefined" in found.stdout

        # a new Gemini CLI session starts: it gets the previous session back as additional context
        start = gemini_hook("SessionStart", {"session_id": "5b0d3f2a-0000-4000-8000-000000000001",
                                             "transcript_path": str(transcript.with_name("session-new.jsonl")),
                                             "cwd": str(project), "hook_event_name": "SessionStart",
                                             "source": "startup"}, env)
        output = json.loads(start.stdout)["hookSpecificOutput"]
        assert "Cannot read properties of undefined" in output["additionalContext"]
    finally:
        daemon.stop()
