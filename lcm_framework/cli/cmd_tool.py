"""``lcm tool NAME [OPTIONS]``: call any registered capability, with options derived from its arguments."""

from __future__ import annotations

import argparse

from ..app import App
from ..errors import ConfigError
from ..jsonable import to_jsonable
from ..kernel.arguments import add_options, call, options
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("name", metavar="NAME", nargs="?", help="the capability (lcm_grep or grep); none: list them")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="its options (`lcm tool NAME --help`)")


def run(args: argparse.Namespace, app: App) -> int:
    found = app.plugins.capabilities()
    if args.name is None:
        for name, capability in sorted(found.items()):
            print(f"{name}: {capability.description}")
        return 0
    chosen = found.get(args.name) or found.get(f"lcm_{args.name}")
    if chosen is None:
        raise ConfigError(f"no capability {args.name!r} (registered: {', '.join(sorted(found)) or 'none'})")
    parser = argparse.ArgumentParser(prog=f"lcm tool {chosen.name}", description=chosen.description)
    add_options(parser, chosen.arguments)
    parsed = parser.parse_args(args.options)
    print_json(to_jsonable(call(app, chosen, options(parsed, chosen.arguments))))
    return 0


COMMAND = CommandSpec(
    name="tool",
    help="call a registered agent tool (capability) and print its JSON result",
    description=(
        "The tools `lcm mcp` and the daemon serve, from the command line: options come from the tool's\n"
        "argument description (the same checks and defaults as over MCP and HTTP). Without NAME: list them."
    ),
    configure=configure,
    run=run,
)
