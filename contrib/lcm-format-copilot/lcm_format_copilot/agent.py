"""The Copilot CLI integration: LCM's own hooks file and the MCP server in ``mcp-config.json``.

Copilot CLI reads personal hooks from every ``$COPILOT_HOME/hooks/*.json``
(``COPILOT_HOME`` defaults to ``~/.copilot``); LCM's are the file
``hooks/lcm.json``, which install creates and uninstall removes. They use the
Claude-compatible event names (``SessionStart``, ``UserPromptSubmit``,
``Stop``, ``PreCompact``, ``PostToolUse``) and matcher groups: for those Copilot
CLI sends snake_case hook JSON (``session_id``, ``cwd``, ``hook_event_name``,
``source``, ``prompt``, and ``transcript_path`` on Stop and PreCompact) and
injects a top-level ``additionalContext`` from SessionStart and
UserPromptSubmit; its hook protocol (``hooks.py``) reads the one and writes the
other. Its SessionEnd names no transcript, so LCM ingests at every turn end (Stop)
instead. MCP servers live in ``$COPILOT_HOME/mcp-config.json`` under
``mcpServers`` (``type: "local"`` is a stdio server; what ``copilot mcp add``
writes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api import LcmError
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
    read_text,
)

from .format import IDENTITY

EVENTS = (HookEvent("SessionStart", 10), HookEvent("UserPromptSubmit", 5), HookEvent("Stop", 5),
          HookEvent("PreCompact", 10), HookEvent("PostToolUse", 5))
HOOKS_FILE = "lcm.json"
HOOK_PROTOCOL = "lcm_format_copilot.hooks"


class CopilotCli:
    name = "copilot"
    display_name = "GitHub Copilot CLI"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = (IDENTITY.identifier,)
    hook_protocol = HOOK_PROTOCOL

    def config_dir(self, env: Mapping[str, str]) -> Path:
        given = env.get("COPILOT_HOME")
        return Path(given).expanduser() if given else home_dir(env) / ".copilot"

    def present(self, env: Mapping[str, str]) -> bool:
        return agent_present(self.config_dir(env), "copilot", env)

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        root = self.config_dir(env)
        mcp_path = root / "mcp-config.json"

        def hooks(data: dict[str, Any]) -> list[str]:
            if install:
                data.setdefault("version", 1)
                jsonfile.add_hooks(data, hook_entries(EVENTS, "--agent", self.name, "--protocol", HOOK_PROTOCOL))
            elif jsonfile.remove_hooks(data) and set(data) == {"version"}:
                data.clear()  # nothing but LCM's hooks was in LCM's own file
            return []

        def servers(data: dict[str, Any]) -> list[str]:
            if install:
                return add_mcp_server(data, mcp_spec(type="local", tools=["*"]), mcp_path)
            jsonfile.remove_mcp_server(data, MCP_NAME)
            return []

        return [edit_json(root / "hooks" / HOOKS_FILE, hooks, install=install),
                edit_json(mcp_path, servers, install=install)]

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        """Also reports every hook switched off (``disableAllHooks`` in the user's ``settings.json``)."""
        root = self.config_dir(env)
        hooks = load_json(root / "hooks" / HOOKS_FILE, "Copilot CLI hooks/lcm.json")
        servers = load_json(root / "mcp-config.json", "Copilot CLI mcp-config.json")
        problems = []
        if _disables_hooks(read_text(root / "settings.json")):
            problems.append("hooks disabled (disableAllHooks = true in settings.json)")
        return AgentStatus(installed_events(EVENTS, hooks), has_mcp_server(servers), tuple(problems))


def _disables_hooks(settings: str | None) -> bool:
    """Whether Copilot CLI's ``settings.json`` says ``"disableAllHooks": true`` (a file that is not plain JSON,
    such as one with comments, is not judged)."""
    try:
        return jsonfile.load(settings, "settings.json").get("disableAllHooks") is True
    except LcmError:  # the CLI's file may hold what JSON does not (comments): doctor then says nothing of it
        return False


AGENT = CopilotCli()
