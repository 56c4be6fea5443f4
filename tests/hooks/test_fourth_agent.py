"""A fourth agent added without touching the core: an in-test integration registered through
``lcm_register_agents``, installed by the core's installer, its hook commands run as its CLI would run them
(its own event names and hook JSON) against a real daemon, its context read back in its own shape."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.installer.agents import changes
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.outbox import Outbox, outbox_path, read_backlog
from lcm_framework.plugin_api import hookimpl
from lcm_framework.plugin_api.agents import (
    AgentStatus,
    FileChange,
    HookEvent,
    edit_json,
    hook_entries,
    installed_events,
    jsonfile,
    load_json,
)
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, OFFLINE_ENV, REPO
from tests.daemon.support import DaemonProcess, free_port
from tests.hooks.test_hooks_e2e import wait_for

EVENTS = (HookEvent("SessionStart", 10, native="boot"), HookEvent("Stop", 5, native="turn_done"),
          HookEvent("PostToolUse", 5, native="tool_done"))


class TinyAgent:
    name = "tiny"
    display_name = "Tiny Agent"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = ("claude-code/claude-jsonl/v1",)
    hook_protocol = "tests.hooks.tiny_agent_hooks"

    def config_dir(self, env: Mapping[str, str]) -> Path:
        return Path(env["HOME"]) / ".tiny"

    def present(self, env: Mapping[str, str]) -> bool:
        return True

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        def edit(data: dict[str, Any]) -> list[str]:
            if install:
                jsonfile.add_hooks(data, hook_entries(EVENTS, "--agent", self.name, "--protocol", self.hook_protocol))
            else:
                jsonfile.remove_hooks(data)
            return []

        return [edit_json(self.config_dir(env) / "hooks.json", edit, install=install)]

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        return AgentStatus(installed_events(EVENTS, load_json(self.config_dir(env) / "hooks.json", "hooks")), False)


class TinyPlugin:
    @hookimpl
    def lcm_register_agents(self, register: Any) -> None:
        register(TinyAgent())


def tiny_runs(command: str, payload: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """What the tiny agent's CLI does with a hook: run the command, its hook JSON on stdin."""
    done = subprocess.run(shlex.split(command), input=json.dumps(payload), env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def test_a_fourth_agent_plugs_in_through_the_hook_and_its_events_reach_storage(lcm_env: Path,
                                                                              tmp_path: Path) -> None:
    plugins = build_plugins(extra=[("tiny_agent", TinyPlugin())])
    env = {**os.environ, "HOME": str(lcm_env.parent)}
    for change in changes("tiny", env, install=True, plugins=plugins):
        change.apply()
    installed = json.loads((lcm_env.parent / ".tiny" / "hooks.json").read_text())["hooks"]
    command = {native: groups[0]["hooks"][0]["command"] for native, groups in installed.items()}
    assert set(command) == {"boot", "turn_done", "tool_done"}

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    log = project / f"{CLAUDE_SAMPLE_ID}.jsonl"
    shutil.copy(CLAUDE_SAMPLE, log)
    port = free_port()
    hook_env = {**env, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port),
                "LCM_DAEMON_AUTOSTART": "false", "PYTHONPATH": str(REPO)}
    mine = {"sid": CLAUDE_SAMPLE_ID, "log": str(log), "dir": str(project)}
    failing = {**mine, "tool": {"name": "shell", "argv": ["make", "test"], "code": 2,
                                "stderr": "FAILED test_orders " + "x" * 5000}}
    assert tiny_runs(command["tool_done"], failing, hook_env).stdout == ""  # durable in the outbox at once
    with Outbox(outbox_path(lcm_env)) as box:
        (captured,) = box.events()
    assert captured.event == "PostToolUse"
    assert captured.payload["tool_facts"]["status"] == "exit 2"
    assert captured.payload["tool_facts"]["command"] == "make test"
    assert captured.payload["tool_facts"]["error"].startswith("FAILED test_orders")
    assert len(captured.payload["tool_facts"]["error"]) <= 300  # capped: never the whole output

    daemon = DaemonProcess(lcm_env, port).start()
    try:
        tiny_runs(command["turn_done"], mine, hook_env)
        wait_for(lambda: read_backlog(lcm_env).pending == 0)  # type: ignore[union-attr]
        with Outbox(outbox_path(lcm_env)) as box:
            assert all(e.processed_at is not None and e.last_error is None for e in box.events())
        compacted = httpx.post(f"{daemon.url}/compact", headers={"Authorization": f"Bearer {daemon.token}"},
                               json={"project": str(project), "session_id": CLAUDE_SAMPLE_ID, "mode": "full"},
                               timeout=120)
        assert compacted.status_code == 200, compacted.text
        started = tiny_runs(command["boot"], {**mine, "why": "resume"}, hook_env)
    finally:
        daemon.stop()
    assert '<summary id="sum_' in json.loads(started.stdout)["inject"]  # its own shape, not LCM's default

    app = App(load_config(project=project, env={**os.environ, "LCM_HOME": str(lcm_env)},
                          plugins=build_plugins()), build_plugins())
    try:
        with app.project(project) as storage:
            (conversation,) = storage.conversations.find_conversations(CLAUDE_SAMPLE_ID)
            assert storage.conversations.message_count(conversation.conversation_id) >= 25
    finally:
        app.close()

