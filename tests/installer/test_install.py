"""lcm install / uninstall on a temporary HOME holding realistic agent configuration."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from lcm_framework.installer.agents import changes
from lcm_framework.installer.service import service_change
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import run_lcm


def apply(agent: str, *, install: bool, env: dict[str, str] | None = None) -> list[bool]:
    """The installer in-process (the CLI runs in a subprocess in the tests above it)."""
    agents = ["claude", "codex"] if agent == "all" else [agent]
    return [c.apply() is not None or c.changed for a in agents
            for c in changes(a, env or dict(os.environ), install=install, plugins=build_plugins())]

# Written the way Claude Code writes it (JSON.stringify(settings, null, 2)), with other hooks,
# other MCP servers, non-ASCII text and unrelated keys.
CLAUDE_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run lint)", "Read(~/.zshrc)"], "deny": ["Read(./.env)"]},
    "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "GREETING": "héllo → wörld"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash.sh", "timeout": 30}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 'Claude finished'"}]}],
    },
    "mcpServers": {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0},
    "cleanupPeriodDays": 30,
    "includeCoAuthoredBy": False,
}
# Claude Code's own state file, where user-scope MCP servers live (`claude mcp add -s user`).
CLAUDE_STATE = {
    "numStartups": 42,
    "installMethod": "native",
    "mcpServers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                              "env": {}}},
    "projects": {"/home/me/src/app": {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": True}},
    "tipsHistory": {"memory-command": 3},
}
CODEX_HOOKS = {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
    {"type": "command", "command": "python3 ~/.codex/hooks/banner.py", "statusMessage": "Loading", "timeout": 5}
]}]}}
CODEX_CONFIG = """# my codex config
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"   # keep this comment
args = ["--stdio"]

[features]
hooks = true
"""


@pytest.fixture
def agent_home(lcm_env: Path) -> Path:
    home = lcm_env.parent
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS, indent=2, ensure_ascii=False) + "\n")
    (home / ".claude.json").write_text(json.dumps(CLAUDE_STATE, indent=2))
    (home / ".codex").mkdir()
    (home / ".codex" / "hooks.json").write_text(json.dumps(CODEX_HOOKS, indent=2) + "\n")
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG)
    return home


def snapshot(home: Path) -> dict[str, bytes]:
    files = (".claude/settings.json", ".claude.json", ".codex/hooks.json", ".codex/config.toml")
    return {p: (home / p).read_bytes() for p in files}


def backups(home: Path) -> list[Path]:
    """The backups install wrote: under $LCM_HOME/backups, never beside the agents' files."""
    assert not [p for p in home.rglob("*") if "lcm-backup" in p.name]
    return sorted(p for p in (home / ".lcm" / "backups").glob("*") if p.name != "install-ledger.json")


def backed_up(backup: Path) -> str:
    """The file a backup is of (``<name>.<digest of its path>.<time>``), relative to HOME."""
    name = backup.name.split(".")
    return {"settings.json": ".claude/settings.json", ".claude.json": ".claude.json", "hooks.json": ".codex/hooks.json",
            "config.toml": ".codex/config.toml"}[".".join(name[:-2])]


def test_install_merges_keeps_everything_and_uninstall_restores_bytes(agent_home: Path) -> None:
    original = snapshot(agent_home)
    result = run_lcm("install")
    assert result.returncode == 0, result.stderr

    settings = json.loads((agent_home / ".claude/settings.json").read_text())
    for key, value in CLAUDE_SETTINGS.items():
        if key not in ("hooks", "mcpServers"):
            assert settings[key] == value
    assert settings["hooks"]["PreToolUse"] == CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    stop = settings["hooks"]["Stop"]
    assert stop[0] == CLAUDE_SETTINGS["hooks"]["Stop"][0]
    ours = stop[1]["hooks"][0]["command"]
    assert ours.endswith("hook Stop --protocol lcm_format_claude.hooks") and os.path.isabs(ours.split()[0])
    assert set(settings["hooks"]) >= {"SessionStart", "Stop", "SubagentStop", "PreCompact", "SessionEnd", "PreToolUse"}
    assert settings["hooks"]["SubagentStop"][0]["hooks"][0]["command"].endswith(
        "hook SubagentStop --protocol lcm_format_claude.hooks")
    assert settings["mcpServers"] == CLAUDE_SETTINGS["mcpServers"]  # Claude Code reads MCP servers elsewhere
    state = json.loads((agent_home / ".claude.json").read_text())
    assert {k: v for k, v in state.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_STATE.items() if k != "mcpServers"}
    assert state["mcpServers"]["memory"] == CLAUDE_STATE["mcpServers"]["memory"]
    assert state["mcpServers"]["lcm"]["args"][-1] == "mcp" and os.path.isabs(state["mcpServers"]["lcm"]["command"])

    codex = json.loads((agent_home / ".codex/hooks.json").read_text())
    assert codex["hooks"]["SessionStart"][0] == CODEX_HOOKS["hooks"]["SessionStart"][0]
    assert codex["hooks"]["Stop"][0]["hooks"][0]["command"].endswith(
        "hook Stop --agent codex --protocol lcm_format_codex.hooks")
    assert "SubagentStop" not in codex["hooks"]  # Codex has no such event
    config_text = (agent_home / ".codex/config.toml").read_text()
    assert config_text.startswith(CODEX_CONFIG)  # the user's text is untouched
    config = tomllib.loads(config_text)
    assert config["mcp_servers"]["docs"] == {"command": "docs-mcp", "args": ["--stdio"]}
    assert config["mcp_servers"]["lcm"]["args"][-1] == "mcp"
    assert len(backups(agent_home)) == 4
    for backup in backups(agent_home):
        assert backup.read_bytes() == original[backed_up(backup)]

    result = run_lcm("uninstall")
    assert result.returncode == 0, result.stderr
    assert snapshot(agent_home) == original


def test_install_is_idempotent(agent_home: Path) -> None:
    assert run_lcm("install").returncode == 0
    first = snapshot(agent_home)
    n_backups = len(backups(agent_home))
    again = run_lcm("install", "--json")
    assert not any(f["changed"] for f in json.loads(again.stdout)["files"])
    assert snapshot(agent_home) == first
    assert len(backups(agent_home)) == n_backups == 4
    assert not any(c.changed for a in ("claude", "codex")
                   for c in changes(a, dict(os.environ), install=True, plugins=build_plugins()))


def test_install_again_brings_an_earlier_installs_hook_commands_up_to_date(agent_home: Path) -> None:
    """Hook lines an earlier LCM wrote (no --protocol, another lcm path) get this install's command; nothing
    else of the user's hooks changes, and no second LCM hook is added."""
    path = agent_home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    old = {"type": "command", "command": "/old/venv/bin/lcm hook Stop", "timeout": 5}
    settings["hooks"]["Stop"].append({"hooks": [old]})
    path.write_text(json.dumps(settings, indent=2) + "\n")
    assert run_lcm("install", "claude").returncode == 0
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    commands = [h["command"] for g in stop for h in g["hooks"]]
    assert commands[0] == "notify-send 'Claude finished'" and len(commands) == 2
    assert commands[1].endswith("/lcm hook Stop --protocol lcm_format_claude.hooks")
    assert not commands[1].startswith("/old/")
    assert not any(c.changed for c in changes("claude", dict(os.environ), install=True, plugins=build_plugins()))


def test_dry_run_prints_a_diff_and_writes_nothing(agent_home: Path) -> None:
    original = snapshot(agent_home)
    result = run_lcm("install", "claude", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "--- " in result.stdout and "+++ " in result.stdout
    assert any(line.startswith("+") and "hook SessionStart" in line for line in result.stdout.splitlines())
    assert ".codex" not in result.stdout
    assert snapshot(agent_home) == original
    assert backups(agent_home) == []


def test_fresh_home_install_creates_private_files_and_uninstall_removes_them(lcm_env: Path) -> None:
    home = lcm_env.parent
    assert run_lcm("install", "--agent", "claude", "--agent", "codex").returncode == 0
    settings = home / ".claude" / "settings.json"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert stat.S_IMODE(settings.parent.stat().st_mode) == 0o700
    assert "hook SessionEnd" in settings.read_text()
    assert run_lcm("uninstall").returncode == 0
    assert sorted(p.name for p in home.iterdir()) == [".lcm"]  # no file or directory LCM created is left


def test_respects_claude_config_dir_and_codex_home(tmp_path: Path) -> None:
    claude, codex = tmp_path / "cc", tmp_path / "cx"
    apply("all", install=True, env={**os.environ, "CLAUDE_CONFIG_DIR": str(claude), "CODEX_HOME": str(codex)})
    assert (claude / "settings.json").is_file() and (codex / "hooks.json").is_file()
    assert "lcm" in json.loads((claude / ".claude.json").read_text())["mcpServers"]
    assert not (Path(os.environ["HOME"]) / ".claude").exists()


def test_foreign_lcm_mcp_entries_are_left_alone(agent_home: Path) -> None:
    path = agent_home / ".claude.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["lcm"] = {"command": "/opt/other/thing", "args": ["serve"]}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    found = changes("claude", dict(os.environ), install=True, plugins=build_plugins())
    assert any("not LCM's" in note for change in found for note in change.notes)
    for change in found:
        change.apply()
    assert json.loads(path.read_text())["mcpServers"]["lcm"] == {"command": "/opt/other/thing", "args": ["serve"]}
    apply("claude", install=False)
    assert json.loads(path.read_text())["mcpServers"]["lcm"] == {"command": "/opt/other/thing", "args": ["serve"]}


def test_invalid_settings_json_is_refused_without_change(agent_home: Path) -> None:
    path = agent_home / ".claude/settings.json"
    path.write_text('{"hooks": ')
    result = run_lcm("install", "claude")
    assert result.returncode == 1
    assert "not valid JSON" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text() == '{"hooks": '


def test_service_unit_is_written_and_removed(agent_home: Path) -> None:
    env = dict(os.environ)
    service_change(env, install=True).apply()
    unit = agent_home / ".config/systemd/user/lcm-daemon.service"
    text = unit.read_text()
    assert "daemon start --foreground" in text and "ExecStart=/" in text
    assert not service_change(env, install=True).changed
    plist = service_change(env, install=True, platform="darwin")
    assert plist.path.name == "dev.lcm.daemon.plist" and "<string>--foreground</string>" in (plist.after or "")
    service_change(env, install=False).apply()
    assert not unit.exists()


def test_service_flag_on_the_command_line(agent_home: Path, lcm_env: Path) -> None:
    """The unit systemd would run: this installation's lcm, in the foreground, on this LCM_HOME, restarted."""
    import configparser
    import shlex

    result = run_lcm("install", "claude", "--service", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dry_run"] is False
    unit = configparser.ConfigParser(interpolation=None, strict=True)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string((agent_home / ".config/systemd/user/lcm-daemon.service").read_text())
    service = unit["Service"]
    argv = shlex.split(service["ExecStart"])
    assert Path(argv[0]).is_absolute() and argv[-3:] == ["daemon", "start", "--foreground"]
    started = subprocess.run([*argv[:-1], "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert started.returncode == 0 and "--foreground" in started.stdout, started.stderr
    assert shlex.split(service["Environment"]) == [f"LCM_HOME={lcm_env}"]
    assert service["Type"] == "simple" and service["Restart"] == "on-failure"
    assert unit["Install"]["WantedBy"] == "default.target"
