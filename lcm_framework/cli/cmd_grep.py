"""``lcm grep PATTERN``: find messages and summaries, message hits grouped by their covering summary."""

from __future__ import annotations

import argparse
import shutil

from ..app import App
from ..kernel.arguments import add_options, options
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..recall.arguments import GREP
from .output import print_json
from .recall_common import add_json, one_line, origin, project_names, session, when
from .where_data_is import hint_when_session_missing, print_where_data_is

SNIPPET_INDENT = "      "


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_options(parser, GREP)  # the lcm_grep tool's arguments, defaults included
    parser.add_argument("--include-meta", action="store_true",
                        help="also search the records kept out of the conversation: agent scaffolding, client "
                             "metadata, the agents' compaction summaries, LCM's own restored context")
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import GrepRequest, from_arguments, grep
    from ..storage.models import SearchMode

    request = from_arguments(GrepRequest, GREP, options(args, GREP), include_meta=args.include_meta)
    every = request.all_projects
    with hint_when_session_missing(app, all_projects=every):
        found = grep(app, request)
    if args.json:
        print_json(found.to_json())
        if not found.found:
            print_where_data_is(app, all_projects=every)
        return 0 if found.found else 1
    results, meta = found.results, found.meta_hits or ()
    names = project_names(app, [r.project_id for r in results if r.total]) if every else {}
    room = max(40, shutil.get_terminal_size().columns) - len(SNIPPET_INDENT)  # each snippet fits the terminal
    for result in results:
        if every and result.total:
            print(f"== project {names[result.project_id]}")
        for group in result.groups:
            print(f"{group.summary_id or '(not summarized yet)'}")
            for hit in group.hits:
                print(f"  {hit.id:<12} {when(hit.created_at)}{session(hit)}{origin(hit)}")
                print(SNIPPET_INDENT + one_line(hit.snippet, room))
        if result.summary_hits:
            print("summaries:")
            for hit in result.summary_hits:
                print(f"  {hit.id}  {when(hit.created_at)}{session(hit)}{origin(hit)}")
                print(SNIPPET_INDENT + one_line(hit.snippet, room))
    if meta:
        print("kept out of the conversation (--include-meta):")
        for m in meta:
            print(f"  {m.id:<14} {m.kind:<17} {when(m.created_at)}")
            print(SNIPPET_INDENT + one_line(m.snippet, room))
    if not found.found:
        hint = (" (the exact text, case-sensitive; --mode full_text finds the words in any order and case)"
                if request.mode == SearchMode.SUBSTRING.value else "")
        print(f"no match for {request.pattern!r}{hint}")
        print_where_data_is(app, all_projects=every)
        return 1
    return 0


COMMAND = CommandSpec(
    name="grep",
    help="find messages and summaries matching a pattern",
    description=(
        "Message hits are grouped under the leaf summary that covers them; `lcm expand SUM_ID\n"
        "--include-messages` or `lcm describe msg_N` then shows the original verbatim.\n"
        "Exit status 1 when nothing matches."
    ),
    configure=configure,
    run=run,
)
