"""``lcm expand ID``: descend a summary to its sources, down to the original messages."""

from __future__ import annotations

import argparse

from ..app import App
from ..extensions import CommandSpec
from .output import print_json
from .recall_common import add_all_projects, add_json, positive


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="sum_<hex> (or msg_<number>)")
    parser.add_argument("--depth", type=positive, default=1, help="levels to descend (default 1)")
    parser.add_argument("--include-messages", action="store_true",
                        help="expand leaf summaries to their source messages, verbatim")
    parser.add_argument("--token-cap", type=positive, metavar="N",
                        help="stop before passing N tokens (default compaction.max_expand_tokens)")
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import expand, find_all, parse_ref

    cap = args.token_cap or int(app.config.get("compaction.max_expand_tokens"))
    found = find_all(app, parse_ref(args.id), lambda storage, ref: expand(
        storage, ref, depth=args.depth, include_messages=args.include_messages, token_cap=cap,
    ), all_projects=args.all_projects)
    if args.json:
        print_json(found if args.all_projects else found[0])
        return 0
    for result in found:
        if args.all_projects:
            print(f"== project {result.project_id[:12]}")
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
