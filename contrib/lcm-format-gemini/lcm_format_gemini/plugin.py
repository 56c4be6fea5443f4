"""Entry point ``gemini_cli`` (group ``lcm_framework.plugins``): registers the Gemini CLI format."""

from __future__ import annotations

from collections.abc import Callable

from lcm_framework.hookspecs import hookimpl
from lcm_framework.transcripts.contracts import TranscriptFormat

from .format import FORMAT


@hookimpl
def lcm_register_formats(register: Callable[[TranscriptFormat], None]) -> None:
    register(FORMAT)
