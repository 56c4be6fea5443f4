"""What an agent integration plugin provides (registered through ``lcm_register_agents``).

An integration knows one coding agent: where its settings, hooks and MCP
configuration live, which of LCM's hook events it can send (under its own
event names) and how long each may take, how to add LCM's hooks and MCP
server there (and remove exactly them again), how its hook JSON reads and how
it takes context back (its ``HookProtocol``), and which transcript formats
its sessions are written in (the format's ``default_roots`` and
``SubagentFormat.companions`` locate the session files and their sub-agent
files).

The hook runs on every turn, so it loads no plugin: the agent runs
``lcm hook EVENT --agent NAME --protocol MODULE`` with its hook JSON on stdin,
and ``lcm hook`` imports only ``MODULE`` (the integration's ``hook_protocol``,
written into the command by ``lcm install``) to read that JSON as LCM's hook
JSON and to answer the agent. The core knows LCM's own events only
(``agent_hooks.events``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..installer.changes import FileChange

@dataclass(frozen=True, slots=True)
class HookEvent:
    """One hook LCM installs: LCM's event, its time limit, and the agent's own name for it when different.

    ``event`` is one of LCM's own (``agent_hooks.events.EVENTS``: SessionStart, UserPromptSubmit, Stop,
    SubagentStop, PreCompact, PostCompact, SessionEnd, and the passive PostToolUse); ``native`` is the agent's
    name for it. Several native events may carry one LCM event (e.g. a tool call that worked and one that
    failed)."""

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


class HookProtocol(Protocol):
    """How one agent's hooks talk: its hook JSON read as LCM's, and LCM's context given back as it reads it.

    ``lcm hook`` imports the object as ``PROTOCOL`` from the integration's ``hook_protocol`` module on every
    hook call, so that module imports nothing heavy (``lcm_framework.plugin_api`` only under TYPE_CHECKING).
    """

    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        """The agent's hook JSON for LCM's ``event`` as LCM's hook JSON: ``session_id``, ``transcript_path``,
        ``cwd``, ``hook_event_name``, ``prompt`` and the event fields of ``agent_hooks.payload.EXTRA_FIELDS``
        (a sub-agent's own transcript is ``subagent_transcript_path``); for PostToolUse the call as
        ``tool_name``, ``tool_input`` (object), ``tool_response`` (object or text) and, when the agent says
        so outright, ``tool_status`` (``ok``, ``error`` or ``exit N``) and ``tool_error`` (text). The core
        caps, redacts and checks every value; nothing else is kept."""
        ...

    def answer(self, event: str, context: str) -> str:
        """The text ``lcm hook`` prints so the agent adds ``context`` (SessionStart, UserPromptSubmit)."""
        ...


class AgentIntegration(Protocol):
    """A coding agent LCM can be installed into (``lcm install NAME``, ``lcm hook EVENT --agent NAME``)."""

    name: str
    """Short lower-case name used on the command line (``[a-z0-9][a-z0-9_-]*``)."""
    display_name: str
    events: Sequence[HookEvent]
    transcript_formats: Sequence[str]
    """Identifiers of the transcript formats the agent writes (``lcm_register_formats``)."""
    hook_protocol: str
    """The importable module whose ``PROTOCOL`` (a ``HookProtocol``) reads the agent's hooks; ``lcm install``
    writes it into each hook command (``--protocol MODULE``)."""

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
