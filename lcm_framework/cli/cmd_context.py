"""``lcm context SESSION``: the assembled model context of a session under a token budget."""

from __future__ import annotations

import argparse
import sys

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json
from .recall_common import add_all_projects, add_json, positive
from .where_data_is import hint_when_session_missing


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("session", metavar="SESSION", help="session id (or a unique prefix)")
    parser.add_argument("--budget", type=positive, metavar="TOKENS",
                        help="token budget (default: compaction.context_budget_tokens)")
    parser.add_argument("--format", choices=("json", "text"), default="text",
                        help="json: the message array (what --json prints); text: one text block (default)")
    add_json(parser)
    add_all_projects(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import ContextRequest, context

    with hint_when_session_missing(app, all_projects=args.all_projects):
        found = context(app, ContextRequest(args.session, budget=args.budget, all_projects=args.all_projects))
    assembled = found.assembled
    if args.json or args.format == "json":
        print_json(found.to_json())
    else:
        print(assembled.as_text())
    if assembled.over_budget:
        print(f"lcm: warning: the context is {assembled.token_estimate:,} tokens, over the budget of "
              f"{assembled.budget:,}: the fresh tail ({assembled.fresh_tail_tokens:,} tokens, the last "
              "compaction.fresh_tail_count messages) is always kept whole", file=sys.stderr)
    return 0


COMMAND = CommandSpec(
    name="context",
    help="show the context LCM would give the model for a session",
    description=(
        "Context assembly over the summary DAG: the fresh tail (last compaction.fresh_tail_count raw\n"
        "messages) always, the newest messages raw, older ranges at the finest level that fits the budget\n"
        "(raw, then leaf, then condensed summaries as <summary> XML), in order. Large blocks appear as\n"
        "[Large file file_... - lcm describe file_...] with an exploration of the file."
    ),
    configure=configure,
    run=run,
)
