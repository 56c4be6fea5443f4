"""Helpers agent integrations build their ``lcm install`` changes with (JSON settings files, hook commands).

Each helper computes text only; the core diffs or applies the resulting
``FileChange`` (with a backup). Everything an agent's configuration does not
hold of LCM's is kept byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..agents.contracts import HookEvent
from . import jsonfile
from .changes import FileChange, read_text
from .command import command_line, lcm_argv

MCP_NAME = "lcm"


def home_dir(env: Mapping[str, str]) -> Path:
    """``$HOME`` of ``env`` (the process's home directory when unset)."""
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def agent_present(config_dir: Path, executable: str, env: Mapping[str, str]) -> bool:
    """Whether an agent is installed for this user: its configuration directory exists, or its command is
    on ``PATH`` (of ``env``)."""
    return config_dir.exists() or shutil.which(executable, path=env.get("PATH", os.defpath)) is not None


def hook_entries(events: Iterable[HookEvent], *extra: str, timeout_scale: int = 1,
                 name: str | None = None) -> list[jsonfile.HookEntry]:
    """``lcm hook <LCM event> <extra...>`` under each event's agent-side name."""
    return [jsonfile.HookEntry(e.agent_event, command_line("hook", e.event, *extra), e.timeout_s, timeout_scale, name)
            for e in events]


def mcp_argv() -> list[str]:
    """The command line of LCM's MCP server (``lcm mcp``)."""
    return [*lcm_argv(), "mcp"]


def mcp_spec(**extra: Any) -> dict[str, Any]:
    """An ``mcpServers`` entry starting ``lcm mcp`` over stdio (``extra`` keys first, e.g. ``type``)."""
    argv = mcp_argv()
    return {**extra, "command": argv[0], "args": argv[1:]}


def add_mcp_server(data: dict[str, Any], spec: Mapping[str, Any], where: Path) -> list[str]:
    """Add LCM's ``mcpServers`` entry; a note when someone else's entry holds the name."""
    if jsonfile.add_mcp_server(data, MCP_NAME, spec) == "conflict":
        return [f"mcpServers.{MCP_NAME} in {where} already exists and is not LCM's: left unchanged"]
    return []


def has_mcp_server(data: Mapping[str, Any]) -> bool:
    """Whether ``data`` holds LCM's own ``mcpServers`` entry."""
    servers = data.get("mcpServers")
    return isinstance(servers, dict) and jsonfile.is_our_mcp(servers.get(MCP_NAME))


def installed_events(events: Iterable[HookEvent], data: Mapping[str, Any]) -> frozenset[str]:
    """LCM's events whose hook is in a parsed hooks document (``{"hooks": {<agent event>: [...]}}``)."""
    found = jsonfile.has_lcm_hooks(data)
    return frozenset(e.event for e in events if e.agent_event in found)


def load_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON settings file as an object (``{}`` when missing); a clear error when it is not one."""
    return jsonfile.load(read_text(path), what)


def edit_json(path: Path, edit: Callable[[dict[str, Any]], Sequence[str]], *, install: bool) -> FileChange:
    """The change ``edit`` makes to the JSON object in ``path`` (it returns notes for the user), serialized the
    way the file was. Uninstall never creates a missing file; an unchanged document keeps its exact text."""
    before = read_text(path)
    data = jsonfile.load(before, str(path))
    notes = tuple(edit(data))
    after = None if before is None and not install else jsonfile.dump(data, before)
    return FileChange(path, before, same_if_equal(before, after), notes)


def same_if_equal(before: str | None, after: str | None) -> str | None:
    """Keep the original text when the document did not change semantically (no reformatting)."""
    if before is not None and after is not None:
        try:
            if json.loads(before) == json.loads(after):
                return before
        except ValueError:
            pass
    return after
