"""Entry point ``codex``: registers the Codex rollout transcript format."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lcm_framework.hookspecs import hookimpl

if TYPE_CHECKING:
    from lcm_framework.transcripts.contracts import TranscriptFormat

# The format module (and the storage records it builds) is imported on first use,
# keeping `lcm --help` fast.


@hookimpl
def lcm_register_formats(register: Callable[[TranscriptFormat], None]) -> None:
    from .format import FORMAT

    register(FORMAT)

