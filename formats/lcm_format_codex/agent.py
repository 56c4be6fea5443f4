"""The Codex integration: hooks in ``hooks.json``, the MCP server and the hooks' trust in ``config.toml``.

Both files live in ``$CODEX_HOME`` (default ``~/.codex``). Codex runs no
untrusted hook, so install also writes the trust state Codex's own hook
review writes (``trust.py``). LCM's TOML keys are single keys, never a marked
range (``lcm_framework.plugin_api.agents.tomlkeys``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.agents import (
    AgentStatus,
    FileChange,
    HookEvent,
    agent_present,
    edit_json,
    home_dir,
    hook_entries,
    installed_events,
    jsonfile,
    load_json,
    mcp_argv,
    read_text,
    tomlkeys,
)

from . import trust

# Codex caps SessionEnd at 3 s. It has no SubagentStop: a sub-agent's rollout is a session of its own.
# PostToolUse: a passive event (tool, status, files, capped command/error) captured into the outbox.
EVENTS = (HookEvent("SessionStart", 10), HookEvent("UserPromptSubmit", 5), HookEvent("Stop", 5),
          HookEvent("PreCompact", 10), HookEvent("SessionEnd", 3), HookEvent("PostToolUse", 5))
MCP_TABLE = ("mcp_servers", "lcm")
HOOK_PROTOCOL = "lcm_format_codex.hooks"


class Codex:
    name = "codex"
    display_name = "Codex"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = ("codex/codex-jsonl/v1",)
    hook_protocol = HOOK_PROTOCOL

    def config_dir(self, env: Mapping[str, str]) -> Path:
        """``$CODEX_HOME`` canonicalized as Codex does (its hook trust keys hold this path), else ``~/.codex``."""
        given = env.get("CODEX_HOME")
        return Path(given).expanduser().resolve() if given else home_dir(env) / ".codex"

    def present(self, env: Mapping[str, str]) -> bool:
        """``$CODEX_HOME`` (or ``~/.codex``) exists, or ``codex`` is on PATH."""
        return agent_present(self.config_dir(env), "codex", env)

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        root = self.config_dir(env)
        hooks_path = root / "hooks.json"

        def hooks(data: dict[str, Any]) -> list[str]:
            if install:
                jsonfile.add_hooks(data, hook_entries(EVENTS, "--agent", self.name, "--protocol", HOOK_PROTOCOL))
            else:
                jsonfile.remove_hooks(data)
            return []

        change = edit_json(hooks_path, hooks, install=install)
        before, after = (trust.lcm_hooks(hooks_path, jsonfile.load(text, str(hooks_path)))
                         for text in (change.before, change.after))
        return [change, self._config_change(root, after if install else before, install=install)]

    def _config_change(self, root: Path, trusted: list[trust.TrustedHook], *, install: bool) -> FileChange:
        """``[mcp_servers.lcm]`` and the trust of ``trusted`` (LCM's hooks after install, before uninstall)."""
        config_path = root / "config.toml"
        before = read_text(config_path)
        what = f"Codex {config_path}"
        current = tomlkeys.parse(tomlkeys.strip_legacy_markers(before or ""), what)
        server = tomlkeys.lookup(current, MCP_TABLE)
        notes: list[str] = []
        keys = _trust_keys(trusted)
        if install:
            if server is not None and not jsonfile.is_our_mcp(server):
                notes.append("[mcp_servers.lcm] already exists and is not LCM's: left unchanged")
            else:
                argv = mcp_argv()
                keys = [tomlkeys.Key(MCP_TABLE, "command", argv[0]), tomlkeys.Key(MCP_TABLE, "args", argv[1:]), *keys]
            after: str | None = tomlkeys.add(before or "", keys, what)
            if trust.trust_problems(trusted, current):
                notes.append(f"trusting LCM's hooks in {config_path} ([hooks.state], as Codex's hook review does): "
                             "Codex runs no untrusted hook")
        else:
            if server is not None and jsonfile.is_our_mcp(server):
                keys += [tomlkeys.Key(MCP_TABLE, name, server[name]) for name in ("command", "args") if name in server]
            after = tomlkeys.remove(before, keys, what) if before is not None else None
        return FileChange(config_path, before, after, tuple(notes))

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        """Also why Codex would not run LCM's hooks (untrusted, changed, disabled)."""
        root = self.config_dir(env)
        data = load_json(root / "hooks.json", "Codex hooks.json")
        config = tomlkeys.parse(read_text(root / "config.toml") or "", "Codex config.toml")
        events = installed_events(EVENTS, data)
        problems = trust.trust_problems(trust.lcm_hooks(root / "hooks.json", data), config)
        return AgentStatus(events, jsonfile.is_our_mcp(tomlkeys.lookup(config, MCP_TABLE)), tuple(problems))


def _trust_keys(hooks: list[trust.TrustedHook]) -> list[tomlkeys.Key]:
    return [tomlkeys.Key((*trust.STATE_TABLE, t.key), "trusted_hash", t.hash) for t in hooks]


AGENT = Codex()
