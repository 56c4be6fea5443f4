"""The Gemini CLI integration: hooks and the MCP server in Gemini CLI's user ``settings.json``.

Gemini CLI reads ``$GEMINI_CLI_HOME/.gemini/settings.json`` (``GEMINI_CLI_HOME``
defaults to the home directory; a project's ``.gemini/settings.json`` is
merged over it). Its hooks are listed per event under ``hooks``, in the same
matcher-group shape Claude Code uses, with the timeout in milliseconds; MCP
servers go under ``mcpServers`` (``command`` + ``args`` is a stdio server).
Gemini CLI names LCM's events its own way: a prompt is ``BeforeAgent``, the
end of a turn ``AfterAgent``, a finished tool call ``AfterTool``. How its hook
JSON reads and how it takes context back is its hook protocol (``hooks.py``).
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
    HookEvent("UserPromptSubmit", 5, native="BeforeAgent"),
    HookEvent("Stop", 5, native="AfterAgent"),
    HookEvent("SessionEnd", 5),
    HookEvent("PostToolUse", 5, native="AfterTool"),
)
"""No ``PreCompress``: Gemini CLI 0.61 fires it before every turn (``ChatCompressionService.compress`` runs it
before checking the threshold), and its recording is append-only, so ``AfterAgent`` already ingests all."""
HOOK_NAME = "lcm"
"""The ``name`` of LCM's hooks (Gemini CLI's ``/hooks`` panel and ``hooksConfig.disabled`` use it)."""
MILLISECONDS = 1000
HOOK_PROTOCOL = "lcm_format_gemini.hooks"


class GeminiCli:
    name = "gemini"
    display_name = "Gemini CLI"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = (IDENTITY.identifier,)
    hook_protocol = HOOK_PROTOCOL

    def config_dir(self, env: Mapping[str, str]) -> Path:
        given = env.get("GEMINI_CLI_HOME")
        return (Path(given).expanduser() if given else home_dir(env)) / ".gemini"

    def present(self, env: Mapping[str, str]) -> bool:
        return agent_present(self.config_dir(env), "gemini", env)

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        path = self.config_dir(env) / "settings.json"

        def edit(data: dict[str, Any]) -> list[str]:
            if install:
                jsonfile.add_hooks(data, hook_entries(EVENTS, "--agent", self.name, "--protocol", HOOK_PROTOCOL,
                                                      timeout_scale=MILLISECONDS,
                                                      name=HOOK_NAME))
                return add_mcp_server(data, mcp_spec(), path)
            jsonfile.remove_hooks(data)
            jsonfile.remove_mcp_server(data, MCP_NAME)
            return []

        return [edit_json(path, edit, install=install)]

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        """Also reports hooks switched off in ``hooksConfig`` (all of them, or LCM's by name)."""
        data = load_json(self.config_dir(env) / "settings.json", "Gemini CLI settings.json")
        found = data.get("hooksConfig")
        config: dict[str, Any] = found if isinstance(found, dict) else {}
        problems = []
        if config.get("enabled") is False:
            problems.append("hooks disabled (hooksConfig.enabled = false)")
        disabled = config.get("disabled")
        if isinstance(disabled, list) and HOOK_NAME in disabled:
            problems.append(f"LCM's hooks disabled (hooksConfig.disabled lists {HOOK_NAME!r})")
        return AgentStatus(installed_events(EVENTS, data), has_mcp_server(data), tuple(problems))


AGENT = GeminiCli()
