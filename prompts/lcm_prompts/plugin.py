"""Registers the built-in templates (``templates/*.j2``) as prompt source ``builtin``, priority 0,
and the ``lcm prompts`` command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import hookimpl
from lcm_framework.plugin_api.summarize import DirectorySource

if TYPE_CHECKING:
    from lcm_framework.plugin_api import CommandSpec, PromptSource

TEMPLATE_DIR = Path(__file__).parent / "templates"


@hookimpl(trylast=True)
def lcm_register_prompt_sources(register: Callable[[PromptSource], None]) -> None:
    register(DirectorySource("builtin", TEMPLATE_DIR, priority=0))


@hookimpl
def lcm_register_commands(register: Callable[[CommandSpec], None]) -> None:
    from .command import COMMAND

    register(COMMAND)
