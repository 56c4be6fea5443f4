"""The Claude Code integration: hooks in ``settings.json``, the MCP server in ``.claude.json``.

Claude Code reads user hooks from ``$CLAUDE_CONFIG_DIR/settings.json``
(default ``~/.claude``) and user-scope MCP servers from ``.claude.json`` next
to that directory (``claude mcp add -s user`` writes there; it ignores
``mcpServers`` in settings.json). Its hook commands carry no ``--agent``: the
command lines ``lcm install`` has always written stay recognisable; they name
its hook protocol (``hooks.py``: Claude Code's hook JSON and how it takes context).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.agents import (
    MCP_NAME,
    AgentStatus,
    FileChange,
    HookEvent,
    add_mcp_server,
    agent_present,
    edit_json,
    has_mcp_server,
    home_dir,
    hook_entries,
    installed_events,
    jsonfile,
    load_json,
    mcp_spec,
)

# SubagentStop: a Task/Agent sub-agent finished; its transcript (subagents/agent-<id>.jsonl) is imported.
# PostToolUse: a passive event (tool, status, files, capped command/error) captured into the outbox.
EVENTS = (HookEvent("SessionStart", 10), HookEvent("UserPromptSubmit", 5), HookEvent("Stop", 5),
          HookEvent("SubagentStop", 5), HookEvent("PreCompact", 10), HookEvent("SessionEnd", 5),
          HookEvent("PostToolUse", 5))
HOOK_PROTOCOL = "lcm_format_claude.hooks"


class ClaudeCode:
    name = "claude"
    display_name = "Claude Code"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = ("claude-code/claude-jsonl/v1",)
    hook_protocol = HOOK_PROTOCOL

    def config_dir(self, env: Mapping[str, str]) -> Path:
        given = env.get("CLAUDE_CONFIG_DIR")
        return Path(given).expanduser() if given else home_dir(env) / ".claude"

    def state_file(self, env: Mapping[str, str]) -> Path:
        """Where Claude Code keeps user-scope MCP servers."""
        given = env.get("CLAUDE_CONFIG_DIR")
        return (Path(given).expanduser() if given else home_dir(env)) / ".claude.json"

    def present(self, env: Mapping[str, str]) -> bool:
        """Its configuration directory exists, or ``claude`` is on PATH."""
        return agent_present(self.config_dir(env), "claude", env)

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        """Uninstall also drops an LCM MCP entry an older install left in settings.json."""
        state_path = self.state_file(env)

        def hooks(data: dict[str, Any]) -> list[str]:
            if install:
                jsonfile.add_hooks(data, hook_entries(EVENTS, "--protocol", HOOK_PROTOCOL))
            else:
                jsonfile.remove_hooks(data)
                jsonfile.remove_mcp_server(data, MCP_NAME)
            return []

        def mcp(data: dict[str, Any]) -> list[str]:
            if install:
                return add_mcp_server(data, mcp_spec(type="stdio"), state_path)
            jsonfile.remove_mcp_server(data, MCP_NAME)
            return []

        return [edit_json(self.config_dir(env) / "settings.json", hooks, install=install),
                edit_json(state_path, mcp, install=install)]

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        settings = load_json(self.config_dir(env) / "settings.json", "Claude Code settings.json")
        state = load_json(self.state_file(env), "Claude Code .claude.json")
        return AgentStatus(installed_events(EVENTS, settings), has_mcp_server(state))


AGENT = ClaudeCode()
