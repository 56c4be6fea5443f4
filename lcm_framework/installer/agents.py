"""What ``lcm install`` / ``lcm uninstall`` change for an agent: its registered integration computes it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..agents.registry import integration
from .changes import FileChange

if TYPE_CHECKING:
    from ..kernel.plugins import Plugins


def changes(agent: str, env: Mapping[str, str], *, install: bool, plugins: Plugins) -> list[FileChange]:
    """What installing (or uninstalling) LCM into ``agent`` changes, computed without writing."""
    return integration(agent, plugins).changes(env, install=install)
