"""``lcm uninstall [claude|codex|all] [--dry-run] [--service]``: remove exactly what install added."""

from __future__ import annotations

import argparse

from ..app import App
from ..extensions import CommandSpec
from .cmd_install import configure, run_for


def run(args: argparse.Namespace, app: App) -> int:
    return run_for(args, install=False)


COMMAND = CommandSpec(
    name="uninstall",
    help="remove LCM's hooks and MCP server from Claude Code and Codex",
    description=(
        "Removes the `lcm hook` commands, the `lcm` MCP server entry and the marked Codex config block that\n"
        "`lcm install` added; everything else is left as it is. --service also removes the daemon unit."
    ),
    configure=configure,
    run=run,
)
