"""``lcm expand ID``: descend a summary to its sources, down to the original messages."""

from __future__ import annotations

import argparse

from ..app import App
from ..kernel.arguments import add_options, options
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..recall.arguments import EXPAND
from .output import print_json
from .recall_common import add_json, project_names


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_options(parser, EXPAND)  # the lcm_expand tool's arguments, defaults included
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import ExpandRequest, expand, from_arguments

    expanded = expand(app, from_arguments(ExpandRequest, EXPAND, options(args, EXPAND)))
    every, found = expanded.request.all_projects, expanded.found
    if args.json:
        print_json(expanded.to_json())
        return 0
    names = project_names(app, [r.project_id for r in found]) if every else {}
    for result in found:
        if every:
            print(f"== project {names[result.project_id]}")
        for node in result.nodes:
            indent = "  " * node.level
            label = f"depth {node.depth}" if node.kind == "summary" else node.role
            via = f" <- {node.via}" if node.via else ""
            print(f"{indent}{node.id} ({label}, {node.token_count} tokens){via}")
            print(indent + node.content.replace("\n", "\n" + indent))
        if result.truncated:
            print(f"[stopped at the token cap of {result.token_cap}: raise --token-cap or expand a child id]")
    return 0


COMMAND = CommandSpec(
    name="expand",
    help="expand a summary to its sources (and original messages)",
    description=(
        "A condensed summary expands to the summaries it condensed; with --include-messages a leaf\n"
        "expands to its source messages verbatim. Levels are accumulated breadth first; nothing is\n"
        "cut mid-item: expansion stops before the item that would pass the token cap."
    ),
    configure=configure,
    run=run,
)
