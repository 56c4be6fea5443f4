"""What ``lcm install`` changes for each agent (Claude Code, Codex), computed without writing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..errors import LcmError
from . import codex_trust, jsonfile, tomlkeys
from .changes import FileChange, read_text
from .command import command_line, lcm_argv

AGENTS = ("claude", "codex")
# event -> timeout in seconds (Codex caps SessionEnd at 3 s).
# SubagentStop: a Task/Agent sub-agent finished; its transcript (subagents/agent-<id>.jsonl) is imported.
# Codex has no such event: a sub-agent's rollout is a session of its own.
CLAUDE_EVENTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "SubagentStop": 5, "PreCompact": 10,
                 "SessionEnd": 5}
CODEX_EVENTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "PreCompact": 10, "SessionEnd": 3}
MCP_TABLE = ("mcp_servers", "lcm")


def claude_dir(env: Mapping[str, str]) -> Path:
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser() if given else _home(env) / ".claude"


def claude_state_file(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps user-scope MCP servers (``claude mcp add -s user`` writes there)."""
    given = env.get("CLAUDE_CONFIG_DIR")
    return (Path(given).expanduser() if given else _home(env)) / ".claude.json"


def codex_dir(env: Mapping[str, str]) -> Path:
    """``$CODEX_HOME`` canonicalized as Codex does (its hook trust keys hold this path), else ``~/.codex``."""
    given = env.get("CODEX_HOME")
    return Path(given).expanduser().resolve() if given else _home(env) / ".codex"


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
    """Hooks go to ``hooks.json``; ``config.toml`` gets ``[mcp_servers.lcm]`` and the trust state of those
    hooks (Codex runs no untrusted hook). LCM's TOML keys are single keys, never a marked range."""
    root = codex_dir(env)
    hooks_path = root / "hooks.json"
    hooks_before = read_text(hooks_path)
    data = jsonfile.load(hooks_before, str(hooks_path))
    trusted_before = codex_trust.lcm_hooks(hooks_path, data)
    if install:
        jsonfile.add_hooks(data, hook_entries("codex"))
    else:
        jsonfile.remove_hooks(data)
    hooks_after: str | None = jsonfile.dump(data, hooks_before)
    if hooks_before is None and not install:
        hooks_after = None

    config_path = root / "config.toml"
    config_before = read_text(config_path)
    what = f"Codex {config_path}"
    current = tomlkeys.parse(tomlkeys.strip_legacy_markers(config_before or ""), what)
    server = tomlkeys.lookup(current, MCP_TABLE)
    notes: list[str] = []
    if install:
        keys = _trust_keys(codex_trust.lcm_hooks(hooks_path, data))
        if server is not None and not jsonfile.is_our_mcp(server):
            notes.append("[mcp_servers.lcm] already exists and is not LCM's: left unchanged")
        else:
            argv = lcm_argv()
            keys = [tomlkeys.Key(MCP_TABLE, "command", argv[0]),
                    tomlkeys.Key(MCP_TABLE, "args", [*argv[1:], "mcp"]), *keys]
        config_after: str | None = tomlkeys.add(config_before or "", keys, what)
        if codex_trust.trust_problems(codex_trust.lcm_hooks(hooks_path, data), current):
            notes.append(f"trusting LCM's hooks in {config_path} ([hooks.state], as Codex's hook review does): "
                         "Codex runs no untrusted hook")
    else:
        keys = _trust_keys(trusted_before)
        if server is not None and jsonfile.is_our_mcp(server):
            keys += [tomlkeys.Key(MCP_TABLE, name, server[name]) for name in ("command", "args") if name in server]
        config_after = tomlkeys.remove(config_before, keys, what) if config_before is not None else None
    return [
        FileChange(hooks_path, hooks_before, _same_if_equal(hooks_before, hooks_after)),
        FileChange(config_path, config_before, config_after, tuple(notes)),
    ]


def _trust_keys(hooks: list[codex_trust.TrustedHook]) -> list[tomlkeys.Key]:
    return [tomlkeys.Key((*codex_trust.STATE_TABLE, t.key), "trusted_hash", t.hash) for t in hooks]


def codex_trust_problems(env: Mapping[str, str]) -> list[str]:
    """Why Codex would not run LCM's hooks (untrusted, changed, disabled); empty when it runs them all."""
    root = codex_dir(env)
    data = jsonfile.load(read_text(root / "hooks.json"), "Codex hooks.json")
    config = tomlkeys.parse(read_text(root / "config.toml") or "", "Codex config.toml")
    return codex_trust.trust_problems(codex_trust.lcm_hooks(root / "hooks.json", data), config)


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
    config = tomlkeys.parse(read_text(root / "config.toml") or "", "Codex config.toml")
    return jsonfile.has_lcm_hooks(data), jsonfile.is_our_mcp(tomlkeys.lookup(config, MCP_TABLE))


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
