"""The Qwen Code integration: hooks and the MCP server in Qwen Code's user ``settings.json``.

Qwen Code reads ``$QWEN_HOME/settings.json`` (``QWEN_HOME`` defaults to
``~/.qwen``; a project's ``.qwen/settings.json`` is merged over it). Its hooks
use Claude Code's event names and matcher-group shape under ``hooks``, with
the timeout in seconds (0.24: a value of 1000 or more is still read as
milliseconds); ``disableAllHooks: true`` switches them all off. MCP servers go
under ``mcpServers`` (``command`` + ``args`` is a stdio server); Qwen Code offers an MCP server's tools
only behind its ``tool_search`` bridge unless the entry says ``alwaysLoadTools: true``, which LCM's does, so
the model sees ``mcp__lcm__lcm_grep`` and the others from the first request. How
its hook JSON reads and how it takes context back is its hook protocol
(``hooks.py``).
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

from .format import IDENTITY

EVENTS = (
    HookEvent("SessionStart", 10),
    HookEvent("UserPromptSubmit", 5),
    HookEvent("Stop", 5),
    HookEvent("SubagentStop", 5),
    HookEvent("PreCompact", 10),
    HookEvent("SessionEnd", 5),
    HookEvent("PostToolUse", 5),
    HookEvent("PostToolUse", 5, native="PostToolUseFailure"),
)
"""A tool call that failed is Qwen Code's PostToolUseFailure (its ``error`` text): LCM's PostToolUse too."""
HOOK_NAME = "lcm"
HOOK_PROTOCOL = "lcm_format_qwen.hooks"


class QwenCode:
    name = "qwen"
    display_name = "Qwen Code"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = (IDENTITY.identifier,)
    hook_protocol = HOOK_PROTOCOL

    def config_dir(self, env: Mapping[str, str]) -> Path:
        given = env.get("QWEN_HOME")
        return Path(given).expanduser() if given else home_dir(env) / ".qwen"

    def present(self, env: Mapping[str, str]) -> bool:
        return agent_present(self.config_dir(env), "qwen", env)

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        path = self.config_dir(env) / "settings.json"

        def edit(data: dict[str, Any]) -> list[str]:
            if install:
                jsonfile.add_hooks(data, hook_entries(EVENTS, "--agent", self.name, "--protocol", HOOK_PROTOCOL,
                                                      name=HOOK_NAME))
                return add_mcp_server(data, mcp_spec(alwaysLoadTools=True), path)
            jsonfile.remove_hooks(data)
            jsonfile.remove_mcp_server(data, MCP_NAME)
            return []

        return [edit_json(path, edit, install=install)]

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        """Also reports every hook switched off (``disableAllHooks``)."""
        data = load_json(self.config_dir(env) / "settings.json", "Qwen Code settings.json")
        problems = ("hooks disabled (disableAllHooks = true)",) if data.get("disableAllHooks") is True else ()
        return AgentStatus(installed_events(EVENTS, data), has_mcp_server(data), problems)


AGENT = QwenCode()
