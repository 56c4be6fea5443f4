"""``lcm uninstall [AGENT|all] [--dry-run] [--service]``: remove exactly what install added."""

from __future__ import annotations

import argparse

from ..app import App
from ..kernel.extensions import CommandSpec
from .cmd_install import configure_uninstall, run_for


def run(args: argparse.Namespace, app: App) -> int:
    return run_for(args, app, install=False)


COMMAND = CommandSpec(
    name="uninstall",
    help="remove LCM's hooks and MCP server from your coding agents",
    description=(
        "Removes the `lcm hook` commands, the `lcm` MCP server entry and the other keys `lcm install` added\n"
        "to each agent's configuration; everything else is left as it is. --service also removes the\n"
        "daemon unit."
    ),
    configure=configure_uninstall,
    run=run,
)
