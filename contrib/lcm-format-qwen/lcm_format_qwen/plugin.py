"""Entry point ``qwen_code`` (group ``lcm_framework.plugins``): the Qwen Code format and agent integration."""

from __future__ import annotations

from collections.abc import Callable

from lcm_framework.plugin_api import hookimpl
from lcm_framework.plugin_api.agents import AgentIntegration
from lcm_framework.plugin_api.formats import TranscriptFormat

from .format import FORMAT


@hookimpl
def lcm_register_formats(register: Callable[[TranscriptFormat], None]) -> None:
    register(FORMAT)


@hookimpl
def lcm_register_agents(register: Callable[[AgentIntegration], None]) -> None:
    from .agent import AGENT

    register(AGENT)
