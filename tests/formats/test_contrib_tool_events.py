"""PostToolUse for the contrib agents: each agent's finished tool call, as its CLI sends it to the hook LCM
installs (payloads from the agents' own hook references), reaches the outbox as capped facts with the daemon
down, and the daemon's consumer learns the fix after a failure from them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.daemon.service import DaemonService
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.outbox import Outbox, outbox_path
from tests.conftest import OFFLINE_ENV, REPO

FAILING = "pytest tests/test_api.py"
FIXED = "pytest -p no:cacheprovider tests/test_api.py --rootdir=."
ERROR = "E   ModuleNotFoundError: No module named 'orders'"
OUTPUT = "UNIQUE-TOOL-OUTPUT " * 400


def gemini(run: dict[str, Any], command: str, code: int) -> dict[str, Any]:
    """Gemini CLI 0.61's AfterTool for ``run_shell_command`` (docs/hooks/reference.md)."""
    content = (f"Command: {command}\nDirectory: (root)\nOutput: {ERROR if code else OUTPUT}\nError: (none)\n"
               f"Exit Code: {code if code else '(none)'}\nSignal: (none)\n")
    return {**run, "hook_event_name": "AfterTool", "timestamp": "2026-12-01T22:55:01.000Z",
            "tool_name": "run_shell_command", "tool_input": {"command": command, "description": "run the tests"},
            "tool_response": {"llmContent": content, "returnDisplay": OUTPUT}}


def qwen(run: dict[str, Any], command: str, code: int) -> dict[str, Any]:
    """Qwen Code 0.24's PostToolUse (Claude Code's names, Gemini CLI's tool result), or its PostToolUseFailure
    (an ``error`` text) for a call that failed outright (as its chunks' ``firePostToolUseFailureEvent`` builds
    them)."""
    if code == 2:
        return {**run, "hook_event_name": "PostToolUseFailure", "tool_name": "run_shell_command",
                "tool_input": {"command": command}, "tool_use_id": "toolu_1", "error": ERROR, "is_interrupt": False}
    content = f"Command: {command}\nOutput: {ERROR if code else OUTPUT}\nExit Code: {code if code else '(none)'}\n"
    return {**run, "hook_event_name": "PostToolUse", "tool_name": "run_shell_command",
            "tool_input": {"command": command}, "tool_response": {"llmContent": content, "returnDisplay": OUTPUT}}


def copilot(run: dict[str, Any], command: str, code: int) -> dict[str, Any]:
    """Copilot CLI's PostToolUse in its Claude-compatible (snake_case) form (cli-command-reference)."""
    result = {"result_type": "failure" if code else "success",
              "text_result_for_llm": f"{ERROR}\n<exited with exit code {code}>" if code else OUTPUT}
    return {"hook_event_name": "PostToolUse", "session_id": run["session_id"], "cwd": run["cwd"],
            "timestamp": "2026-12-01T23:04:13.600Z", "tool_name": "Bash",  # what 1.0.102 sends (its docs: bash)
            "tool_input": json.dumps({"command": command, "description": "run the tests"}), "tool_result": result}


def opencode(run: dict[str, Any], command: str, code: int) -> dict[str, Any]:
    """What LCM's OpenCode plugin (plugin.js) sends from ``tool.execute.after`` for a bash call."""
    response: dict[str, Any] = {"exit_code": code, **({"output": ERROR} if code else {})}
    return {"hook_event_name": "PostToolUse", **run, "tool_name": "bash", "tool_input": {"command": command},
            "tool_response": response}


AGENTS = {"gemini": gemini, "qwen": qwen, "copilot": copilot, "opencode": opencode}


def hook(agent: str, payload: dict[str, Any], home: Path) -> subprocess.CompletedProcess[str]:
    """The command ``lcm install`` writes for the agent's PostToolUse (``tests/formats/test_*_agent.py``)."""
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": "9",
           "PYTHONPATH": str(REPO / "contrib" / f"lcm-format-{agent}")}
    return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", "PostToolUse", "--agent", agent,
                           "--protocol", f"lcm_format_{agent}.hooks"], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize(("agent", "failure"), [*((a, 1) for a in sorted(AGENTS)), ("qwen", 2)])
def test_a_failing_then_fixed_command_reaches_the_outbox_and_the_consumer(agent: str, failure: int, lcm_env: Path,
                                                                         tmp_path: Path) -> None:
    project = (tmp_path / "proj").resolve()
    (project / ".git").mkdir(parents=True)
    run = {"session_id": "s-" + agent, "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    for command, code in ((FAILING, failure), (FIXED, 0)):
        done = hook(agent, AGENTS[agent](run, command, code), lcm_env)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done.stderr
    with Outbox(outbox_path(lcm_env)) as box:
        failed, fixed = box.events()
    assert (failed.event, fixed.event) == ("PostToolUse", "PostToolUse")
    assert failed.payload["tool_facts"]["command"] == FAILING and fixed.payload["tool_facts"]["command"] == FIXED
    assert failed.payload["tool_facts"]["status"] != "ok" and fixed.payload["tool_facts"]["status"] == "ok"
    assert "ModuleNotFoundError" in failed.payload["tool_facts"]["error"]
    assert "UNIQUE-TOOL-OUTPUT" not in json.dumps([failed.payload, fixed.payload])  # never the output

    plugins = build_plugins()
    service = DaemonService(load_config(project=project, plugins=plugins), plugins)

    async def consume() -> int:
        try:
            return await service.drain_outbox()
        finally:
            await service.close()

    assert asyncio.run(consume()) == 2
    with Outbox(outbox_path(lcm_env)) as box:
        assert all(e.processed_at is not None and e.last_error is None for e in box.events())
    app = App(load_config(project=project, plugins=plugins), plugins)
    try:
        with app.project(project) as storage:
            (memory,) = storage.promoted_memory.list_memories(tag="fix")
    finally:
        app.close()
    assert FAILING in memory.content and FIXED in memory.content and "ModuleNotFoundError" in memory.content
    assert json.loads(memory.metadata or "{}")["events"] == [failed.uuid, fixed.uuid]


def test_files_a_contrib_agent_keeps_editing_together_become_a_co_edit_candidate(lcm_env: Path,
                                                                                 tmp_path: Path) -> None:
    """Gemini CLI's edit tools (write_file, replace) are edits because its protocol says so (``kind``), not
    because the core knows their names."""
    project = (tmp_path / "proj").resolve()
    (project / ".git").mkdir(parents=True)
    for n in range(3):
        run = {"session_id": f"s{n}", "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
        for tool, name in (("write_file", "api.py"), ("replace", "schema.py")):
            payload = {**run, "hook_event_name": "AfterTool", "tool_name": tool,
                       "tool_input": {"file_path": str(project / name), "content": OUTPUT},
                       "tool_response": {"llmContent": f"Successfully wrote {name}", "returnDisplay": OUTPUT}}
            assert hook("gemini", payload, lcm_env).returncode == 0
    plugins = build_plugins()
    service = DaemonService(load_config(project=project, plugins=plugins), plugins)

    async def consume() -> int:
        try:
            return await service.drain_outbox()
        finally:
            await service.close()

    assert asyncio.run(consume()) == 6
    app = App(load_config(project=project, plugins=plugins), plugins)
    try:
        with app.project(project) as storage:
            (memory,) = storage.promoted_memory.list_memories(tag="co-edit")
    finally:
        app.close()
    assert memory.content == "api.py and schema.py are usually changed together (3 sessions edited both)"
