"""``lcm grep PATTERN``: find messages and summaries, message hits grouped by their covering summary."""

from __future__ import annotations

import argparse
from typing import Any

from ..app import App
from ..extensions import CommandSpec
from ..jsonable import to_jsonable
from .output import print_json
from .recall_common import add_all_projects, add_json, add_no_subagents, one_line, origin, positive, when


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", metavar="PATTERN")
    parser.add_argument("--mode", choices=("full_text", "regex", "substring"), default="full_text",
                        help="full_text (words, default), regex (RE2 syntax) or substring")
    parser.add_argument("--scope", choices=("messages", "summaries", "both"), default="both")
    parser.add_argument("--session", metavar="ID", help="only this session (id or unique prefix)")
    parser.add_argument("--since", metavar="ISO", help="only items created at or after this date/time")
    parser.add_argument("--limit", type=positive, default=50, help="maximum hits per kind (default 50)")
    parser.add_argument("--include-meta", action="store_true",
                        help="also search the records kept out of the conversation: agent scaffolding, client "
                             "metadata, the agents' compaction summaries, LCM's own restored context")
    add_no_subagents(parser)
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import Scope, grep_all, parse_since
    from ..recall.meta import grep_meta_all
    from ..storage.models import SearchMode

    since = parse_since(args.since)
    results = grep_all(app, args.pattern, all_projects=args.all_projects, session=args.session,
                       mode=SearchMode(args.mode), scope=Scope(args.scope), since=since, limit=args.limit,
                       include_subagents=not args.no_subagents)
    meta = grep_meta_all(app, args.pattern, all_projects=args.all_projects, session=args.session,
                         mode=SearchMode(args.mode), since=since, limit=args.limit) if args.include_meta else []
    found = any(r.total for r in results) or bool(meta)
    if args.json:
        value: Any = [r for r in results if r.total] if args.all_projects else results[0]
        if args.include_meta:
            value = {"results": value, "meta_hits": meta} if args.all_projects else {**to_jsonable(value),
                                                                                     "meta_hits": meta}
        print_json(value)
        return 0 if found else 1
    for result in results:
        if args.all_projects and result.total:
            print(f"== project {result.project_id[:12]}")
        for group in result.groups:
            print(f"{group.summary_id or '(not summarized yet)'}")
            for hit in group.hits:
                print(f"  {hit.id:<12} {when(hit.created_at)}  {one_line(hit.snippet)}{origin(hit)}")
        if result.summary_hits:
            print("summaries:")
            for hit in result.summary_hits:
                print(f"  {hit.id}  {when(hit.created_at)}  {one_line(hit.snippet)}{origin(hit)}")
    if meta:
        print("kept out of the conversation (--include-meta):")
        for m in meta:
            print(f"  {m.id:<14} {m.kind:<17} {when(m.created_at)}  {one_line(m.snippet)}")
    if not found:
        print(f"no match for {args.pattern!r}")
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
