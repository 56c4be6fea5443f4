"""What an agent integration plugin provides (registered through ``lcm_register_agents``).

An integration knows one coding agent: where its settings, hooks and MCP
configuration live, which of LCM's hook events it can send and how long each
may take, how to add LCM's hooks and MCP server there (and remove exactly
them again), and which transcript formats its sessions are written in (the
format's ``default_roots`` and ``SubagentFormat.companions`` locate the
session files and their sub-agent files).

The hook itself needs nothing from the plugin: the agent runs
``lcm hook EVENT [--agent NAME]`` with its hook JSON on stdin, and ``lcm hook``
reads the fields every supported agent sends (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and the event fields listed
in ``agent_hooks.payload.EXTRA_FIELDS``) without loading any plugin, because it
runs on every turn. An integration whose agent names an event differently
installs LCM's command under the agent's own name (``HookEvent.native``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..installer.changes import FileChange

@dataclass(frozen=True, slots=True)
class HookEvent:
    """One hook LCM installs: LCM's event, its time limit, and the agent's own name for it when different.

    ``event`` is one the daemon handles (``daemon.service.HOOK_EVENTS``: SessionStart, UserPromptSubmit,
    Stop, SubagentStop, PreCompact, PostCompact, SessionEnd, and the passive PostToolUse)."""

    event: str
    timeout_s: int
    native: str = ""

    @property
    def agent_event(self) -> str:
        """The event name the agent's configuration lists the hook under."""
        return self.native or self.event


@dataclass(frozen=True, slots=True)
class AgentStatus:
    """What ``lcm doctor`` reports for an agent: the LCM events with an LCM hook installed, whether LCM's
    MCP server is configured, and any other reason the agent would not run LCM's hooks."""

    hooks: frozenset[str]
    mcp: bool
    problems: tuple[str, ...] = ()


class AgentIntegration(Protocol):
    """A coding agent LCM can be installed into (``lcm install NAME``, ``lcm hook EVENT --agent NAME``)."""

    name: str
    """Short lower-case name used on the command line (``[a-z0-9][a-z0-9_-]*``)."""
    display_name: str
    events: Sequence[HookEvent]
    transcript_formats: Sequence[str]
    """Identifiers of the transcript formats the agent writes (``lcm_register_formats``)."""

    def config_dir(self, env: Mapping[str, str]) -> Path:
        """The directory holding the agent's user-level settings, hooks and MCP configuration."""
        ...

    def present(self, env: Mapping[str, str]) -> bool:
        """Whether the agent is installed for this user (``plugin_api.agents.agent_present``: its configuration
        directory exists or its command is on PATH). ``lcm install`` installs only into present agents unless
        one is named; ``lcm doctor`` skips the others."""
        ...

    def changes(self, env: Mapping[str, str], *, install: bool) -> list[FileChange]:
        """The file changes that add (``install``) or remove LCM's hooks and MCP server, computed without
        writing: the core prints them as a diff (``--dry-run``) or applies them with a backup each."""
        ...

    def status(self, env: Mapping[str, str]) -> AgentStatus:
        """What is installed now (read only)."""
        ...
