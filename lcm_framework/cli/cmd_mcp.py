"""``lcm mcp``: serve the recall tools to an agent over MCP (stdio)."""

from __future__ import annotations

import argparse

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .mcp_options import options


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    from .output import wrapped

    tools = sorted(plugins.capabilities())
    parser.epilog = wrapped(f"tools served: {', '.join(tools) or 'none registered'}")
    options(parser)


def run(args: argparse.Namespace, app: App) -> int:
    if args.list:
        for name, capability in sorted(app.plugins.capabilities().items()):
            print(f"{name}: {capability.description}")
        return 0
    from ..mcp_server import serve

    serve(lambda: app)  # (``lcm mcp`` itself takes the fast path in cli/main.py)
    return 0


COMMAND = CommandSpec(
    name="mcp",
    help="serve the registered agent tools (lcm_grep, lcm_search, ...) over MCP (stdio)",
    description=(
        "An MCP server on stdin/stdout for the current project (or --project PATH). Tools come from the\n"
        "capabilities plugins register (listed below; `lcm mcp --list` describes each).\n"
        "`lcm install` adds it to your coding agents."
    ),
    configure=configure,
    run=run,
)
