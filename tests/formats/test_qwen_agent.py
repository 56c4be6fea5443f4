"""The contrib Qwen Code agent integration, installed on its own: ``lcm install qwen`` / ``lcm uninstall qwen`` in
subprocesses with HOME in a temp dir."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_lcm

EVENTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "SubagentStop": 5, "PreCompact": 10, "SessionEnd": 5,
          "PostToolUse": 5}
USER_SETTINGS: dict[str, Any] = {
    "ui": {"theme": "GitHub"},
    "hooks": {"PreToolUse": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./check.sh"}]}]},
    "mcpServers": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}},
    "$version": 4,
}


def test_install_merges_into_qwen_settings_and_uninstall_restores_the_bytes(qwen_site: Path, lcm_env: Path) -> None:
    path = lcm_env.parent / ".qwen" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=2) + "\n"
    path.write_text(original)
    env = {"PYTHONPATH": str(qwen_site)}

    dry = run_lcm("install", "qwen", "--dry-run", env=env)
    assert dry.returncode == 0 and "lcm hook SessionStart --agent qwen" in dry.stdout  # the diff only
    assert path.read_text() == original

    assert run_lcm("install", "qwen", env=env).returncode == 0
    settings = json.loads(path.read_text())
    assert {k: settings[k] for k in ("ui", "$version")} == {"ui": {"theme": "GitHub"}, "$version": 4}
    assert settings["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    for event, timeout_s in EVENTS.items():
        (group,) = settings["hooks"][event]
        (handler,) = group["hooks"]
        assert (handler["type"], handler["name"], handler["timeout"]) == ("command", "lcm", timeout_s)  # seconds
        assert handler["command"].endswith(f"hook {event} --agent qwen --protocol lcm_format_qwen.hooks")
    ((failed,),) = [g["hooks"] for g in settings["hooks"]["PostToolUseFailure"]]  # a failed call: PostToolUse too
    assert failed["command"].endswith("hook PostToolUse --agent qwen --protocol lcm_format_qwen.hooks")
    server = settings["mcpServers"]["lcm"]
    assert server["args"][-1] == "mcp" and server["alwaysLoadTools"] is True  # no tool_search bridge for LCM
    assert settings["mcpServers"]["docs"] == USER_SETTINGS["mcpServers"]["docs"]

    installed = path.read_bytes()
    again = json.loads(run_lcm("install", "qwen", "--json", env=env).stdout)
    assert again["files"] == [{"path": str(path), "changed": False, "backup": None, "notes": []}]
    assert path.read_bytes() == installed

    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["qwen_hooks"]["status"] == "ok", checks["qwen_hooks"]
    path.write_text(json.dumps({**json.loads(installed), "disableAllHooks": True}, indent=2) + "\n")
    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["qwen_hooks"]["status"] == "fail" and "disableAllHooks" in checks["qwen_hooks"]["detail"]
    path.write_bytes(installed)

    assert run_lcm("uninstall", "qwen", env=env).returncode == 0
    assert path.read_text() == original


def test_qwen_home_moves_the_settings_and_the_sessions(qwen_site: Path, lcm_env: Path, tmp_path: Path) -> None:
    qwen_home = tmp_path / "qwen-home"
    env = {"PYTHONPATH": str(qwen_site), "QWEN_HOME": str(qwen_home)}
    assert run_lcm("install", "qwen", env=env).returncode == 0
    assert "lcm" in json.loads((qwen_home / "settings.json").read_text())["mcpServers"]
    assert not (lcm_env.parent / ".qwen").exists()
    assert run_lcm("uninstall", "qwen", env=env).returncode == 0
    assert not (qwen_home / "settings.json").exists()  # LCM created it: removed again


def test_qwen_is_an_agent_only_with_the_distribution(qwen_site: Path) -> None:
    with_it = run_lcm("install", "--help", env={"PYTHONPATH": str(qwen_site)})
    assert with_it.returncode == 0 and "qwen (Qwen Code)" in with_it.stdout
    assert "invalid choice: 'qwen'" in run_lcm("install", "qwen").stderr
