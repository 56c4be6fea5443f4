"""Entry point ``claude_code``: registers the Claude Code transcript format and agent integration."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.agents import AgentIntegration
    from lcm_framework.plugin_api.formats import TranscriptFormat

# The format module (and the storage records it builds) is imported on first use,
# keeping `lcm --help` fast.


@hookimpl
def lcm_register_formats(register: Callable[[TranscriptFormat], None]) -> None:
    from .format import FORMAT

    register(FORMAT)


@hookimpl
def lcm_sniff_format(head: Sequence[Any]) -> str | None:
    from .format import FORMAT

    return FORMAT.identity.identifier if FORMAT.sniff(head) else None


@hookimpl
def lcm_register_agents(register: Callable[[AgentIntegration], None]) -> None:
    from .agent import AGENT

    register(AGENT)
