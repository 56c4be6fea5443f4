"""What ``lcm install`` changes for each agent (Claude Code, Codex), computed without writing."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from ..errors import LcmError
from . import jsonfile, tomlblock
from .changes import FileChange, read_text
from .command import command_line, lcm_argv

AGENTS = ("claude", "codex")
# event -> timeout in seconds (Codex caps SessionEnd at 3 s).
CLAUDE_EVENTS = {"SessionStart": 10, "Stop": 5, "PreCompact": 10, "SessionEnd": 5}
CODEX_EVENTS = {"SessionStart": 10, "Stop": 5, "PreCompact": 10, "SessionEnd": 3}


def claude_dir(env: Mapping[str, str]) -> Path:
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser() if given else _home(env) / ".claude"


def claude_state_file(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps user-scope MCP servers (``claude mcp add -s user`` writes there)."""
    given = env.get("CLAUDE_CONFIG_DIR")
    return (Path(given).expanduser() if given else _home(env)) / ".claude.json"


def codex_dir(env: Mapping[str, str]) -> Path:
    given = env.get("CODEX_HOME")
    return Path(given).expanduser() if given else _home(env) / ".codex"


def _home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def hook_entries(agent: str) -> list[jsonfile.HookEntry]:
    events = CLAUDE_EVENTS if agent == "claude" else CODEX_EVENTS
    extra = () if agent == "claude" else ("--agent", "codex")
    return [jsonfile.HookEntry(e, command_line("hook", e, *extra), t) for e, t in events.items()]


def mcp_spec() -> dict[str, object]:
    argv = lcm_argv()
    return {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"]}


def claude_changes(env: Mapping[str, str], *, install: bool) -> list[FileChange]:
    """Hooks go to ``settings.json``; the MCP server to ``.claude.json`` (Claude Code ignores
    ``mcpServers`` in settings.json). Uninstall also drops an LCM entry left in settings.json."""
    path = claude_dir(env) / "settings.json"
    before = read_text(path)
    data = jsonfile.load(before, str(path))
    if install:
        jsonfile.add_hooks(data, hook_entries("claude"))
    else:
        jsonfile.remove_hooks(data)
        jsonfile.remove_mcp_server(data, "lcm")
    after = None if before is None and not install else jsonfile.dump(data, before)

    state_path = claude_state_file(env)
    state_before = read_text(state_path)
    state = jsonfile.load(state_before, str(state_path))
    notes: list[str] = []
    if install:
        if jsonfile.add_mcp_server(state, "lcm", mcp_spec()) == "conflict":
            notes.append(f"mcpServers.lcm in {state_path} already exists and is not LCM's: left unchanged")
    else:
        jsonfile.remove_mcp_server(state, "lcm")
    state_after = None if state_before is None and not install else jsonfile.dump(state, state_before)
    return [FileChange(path, before, _same_if_equal(before, after)),
            FileChange(state_path, state_before, _same_if_equal(state_before, state_after), tuple(notes))]


def codex_changes(env: Mapping[str, str], *, install: bool) -> list[FileChange]:
    root = codex_dir(env)
    hooks_path = root / "hooks.json"
    hooks_before = read_text(hooks_path)
    data = jsonfile.load(hooks_before, str(hooks_path))
    if install:
        jsonfile.add_hooks(data, hook_entries("codex"))
    else:
        jsonfile.remove_hooks(data)
    hooks_after: str | None = jsonfile.dump(data, hooks_before)
    if hooks_before is None and not install:
        hooks_after = None

    config_path = root / "config.toml"
    config_before = read_text(config_path)
    notes: list[str] = []
    if install:
        if tomlblock.has_foreign_lcm_server(config_before or ""):
            config_after = config_before
            notes.append("[mcp_servers.lcm] already exists and is not LCM's: left unchanged")
        else:
            config_after = tomlblock.add(config_before or "", lcm_argv())
            try:
                tomllib.loads(config_after)
            except tomllib.TOMLDecodeError as exc:
                raise LcmError(f"adding [mcp_servers.lcm] to {config_path} would make it invalid ({exc}); "
                               "add it by hand") from None
    else:
        config_after = tomlblock.remove(config_before) if config_before is not None else None
    return [
        FileChange(hooks_path, hooks_before, _same_if_equal(hooks_before, hooks_after)),
        FileChange(config_path, config_before, config_after, tuple(notes)),
    ]


def changes(agent: str, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
    if agent == "claude":
        return claude_changes(env, install=install)
    if agent == "codex":
        return codex_changes(env, install=install)
    raise LcmError(f"unknown agent {agent!r} (choose from: {', '.join(AGENTS)}, all)")


def installed(agent: str, env: Mapping[str, str]) -> tuple[set[str], bool]:
    """(events with an LCM hook, whether the LCM MCP server is configured) for doctor."""
    if agent == "claude":
        data = jsonfile.load(read_text(claude_dir(env) / "settings.json"), "Claude Code settings.json")
        state = jsonfile.load(read_text(claude_state_file(env)), "Claude Code .claude.json")
        servers = state.get("mcpServers")
        has_mcp = isinstance(servers, dict) and jsonfile.is_our_mcp(servers.get("lcm"))
        return jsonfile.has_lcm_hooks(data), has_mcp
    root = codex_dir(env)
    data = jsonfile.load(read_text(root / "hooks.json"), "Codex hooks.json")
    return jsonfile.has_lcm_hooks(data), tomlblock.BEGIN in (read_text(root / "config.toml") or "")


def _same_if_equal(before: str | None, after: str | None) -> str | None:
    """Keep the original text when the document did not change semantically (no reformatting)."""
    if before is not None and after is not None:
        try:
            import json

            if json.loads(before) == json.loads(after):
                return before
        except ValueError:
            pass
    return after
