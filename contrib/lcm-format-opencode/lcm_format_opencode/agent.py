"""The OpenCode integration: LCM's plugin file and the MCP server in OpenCode's global ``opencode.json``.

OpenCode loads every ``plugins/*.js`` of its configuration directory
(``$XDG_CONFIG_HOME/opencode``, default ``~/.config/opencode``) at start; LCM's
is ``plugins/lcm.js`` (``plugin.js`` of this package with the absolute ``lcm``
command filled in), which install writes and uninstall removes. OpenCode has
no command hooks: the plugin runs ``lcm hook EVENT --agent opencode`` itself
from OpenCode's plugin hooks (``chat.message`` for SessionStart and
UserPromptSubmit, their context added through
``experimental.chat.system.transform``; the ``session.idle`` event for Stop;
``experimental.session.compacting`` for PreCompact; ``tool.execute.after`` for
PostToolUse), naming its hook protocol (``hooks.py``), and mirrors each session
into the JSONL files the format reads. MCP servers are the ``mcp`` object of
``opencode.json``: ``{"type": "local", "command": [argv...]}`` is a stdio
server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api import LcmError
from lcm_framework.plugin_api.agents import (
    MCP_NAME,
    AgentStatus,
    FileChange,
    HookEvent,
    agent_present,
    edit_json,
    home_dir,
    jsonfile,
    load_json,
    mcp_argv,
    read_text,
)

from .format import IDENTITY

EVENTS = (HookEvent("SessionStart", 10), HookEvent("UserPromptSubmit", 5), HookEvent("Stop", 5),
          HookEvent("PreCompact", 10), HookEvent("PostToolUse", 5))
HOOK_PROTOCOL = "lcm_format_opencode.hooks"
PLUGIN_FILE = "lcm.js"
MARKER = "// LCM's OpenCode plugin: written by `lcm install opencode`"


def plugin_text() -> str:
    """``plugin.js`` with this installation's ``lcm`` command (``lcm mcp``'s argv without ``mcp``)."""
    template = files(__package__).joinpath("plugin.js").read_text(encoding="utf-8")
    return template.replace("__LCM_ARGV__", json.dumps(mcp_argv()[:-1]))


def is_ours(spec: Any) -> bool:
    """Whether an ``mcp`` entry is LCM's own: a local server whose command runs ``lcm mcp``."""
    command = spec.get("command") if isinstance(spec, dict) else None
    return (isinstance(command, list) and bool(command) and all(isinstance(a, str) for a in command)
            and jsonfile.is_our_mcp({"command": command[0], "args": command[1:]}))


class OpenCode:
    name = "opencode"
    display_name = "OpenCode"
    events: Sequence[HookEvent] = EVENTS
    transcript_formats: Sequence[str] = (IDENTITY.identifier,)
    hook_protocol = HOOK_PROTOCOL

    def config_dir(self, env: Mapping[str, str]) -> Path:
        given = env.get("XDG_CONFIG_HOME")
        return (Path(given).expanduser() if given else home_dir(env) / ".config") / "opencode"

    def present(self, env: Mapping[str, str]) -> bool:
        return agent_present(self.config_dir(env), "opencode", env)

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        root = self.config_dir(env)
        config = root / "opencode.json"

        def servers(data: dict[str, Any]) -> list[str]:
            found = data.get("mcp", {})
            if not isinstance(found, dict):
                raise LcmError(f"the existing 'mcp' value in {config} is not an object; refusing to change it")
            if install:
                if found.get(MCP_NAME) is None:
                    data["mcp"] = {**found, MCP_NAME: {"type": "local", "command": mcp_argv(), "enabled": True}}
                elif not is_ours(found[MCP_NAME]):
                    return [f"mcp.{MCP_NAME} in {config} already exists and is not LCM's: left unchanged"]
            elif is_ours(found.get(MCP_NAME)):
                del found[MCP_NAME]
                if not found:
                    del data["mcp"]
            return []

        return [self._plugin_change(root / "plugins" / PLUGIN_FILE, install=install),
                edit_json(config, servers, install=install)]

    def _plugin_change(self, path: Path, *, install: bool) -> FileChange:
        """Write (or remove) LCM's plugin file; a file of that name that is not LCM's is left alone."""
        before = read_text(path)
        if before is not None and not before.startswith(MARKER):
            return FileChange(path, before, before, (f"{path} exists and is not LCM's: left unchanged",))
        return FileChange(path, before, plugin_text() if install else None)

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        """The hooks count as installed while ``plugins/lcm.js`` is LCM's; an outdated one is a problem."""
        root = self.config_dir(env)
        plugin = read_text(root / "plugins" / PLUGIN_FILE)
        ours = plugin is not None and plugin.startswith(MARKER)
        problems = (f"{root / 'plugins' / PLUGIN_FILE} is not what this LCM writes (another lcm, or edited)",) \
            if ours and plugin != plugin_text() else ()
        found = load_json(root / "opencode.json", "OpenCode opencode.json").get("mcp")
        mcp = isinstance(found, dict) and is_ours(found.get(MCP_NAME))
        return AgentStatus(frozenset(e.event for e in EVENTS) if ours else frozenset(), mcp, problems)


AGENT = OpenCode()
