"""``lcm memory add|list|show|search|archive|revive|review|forget|feedback|stats``: promoted memories."""

from __future__ import annotations

import argparse
from typing import Any

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json, print_table
from .recall_common import add_json, one_line, positive
from .where_data_is import print_where_data_is


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"confidence must be a number in 0..1, got {text!r}")
    return value


MEMORY_ID = "the memory: mem_<N> (or gmem_<N> with --global)"


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = _verb(sub, "add", "store a memory (the same insight again raises the existing one's confidence)")
    add.add_argument("text", metavar="TEXT", help="the insight, in a sentence or two")
    add.add_argument("--tag", dest="tags", action="append", default=[], help="a tag (repeat for more; order kept)")
    add.add_argument("--confidence", type=_confidence, help="0..1 (default 0.5)")
    listing = _verb(sub, "list", "active memories, oldest first")
    listing.add_argument("--tag", help="only memories with this exact tag")
    listing.add_argument("--archived", action="store_true", help="include archived memories")
    _verb(sub, "show", "one memory with its lineage and recall counts").add_argument("id", metavar="ID", help=MEMORY_ID)
    find = _verb(sub, "search", "ranked search (any word, stemmed) over active memories; exit 1 when none")
    find.add_argument("query", metavar="QUERY", help="the words to look for")
    find.add_argument("--limit", type=positive, default=20)
    for name, help_text in (("archive", "hide a memory from recall (kept; `revive` brings it back)"),
                            ("revive", "make an archived memory active again"),
                            ("forget", "delete a memory and its recall history for good")):
        _verb(sub, name, help_text).add_argument("id", metavar="ID", help=MEMORY_ID)
    review = _verb(sub, "review", "stale candidates: old, low confidence, never useful")
    review.add_argument("--days", type=positive, default=30, help="untouched for this many days (default 30)")
    review.add_argument("--max-confidence", type=_confidence, default=0.4, help="default 0.4")
    review.add_argument("--archive", action="store_true", help="archive every candidate in one step")
    fb = _verb(sub, "feedback", "say whether a surfaced memory helped (moves its confidence)")
    fb.add_argument("id", metavar="ID", help=MEMORY_ID)
    verdict = fb.add_mutually_exclusive_group(required=True)
    verdict.add_argument("--useful", dest="useful", action="store_true", default=None,
                         help="it helped: its confidence rises")
    verdict.add_argument("--not-useful", dest="useful", action="store_false",
                         help="it did not help: its confidence falls")
    _verb(sub, "stats", "surfaced / useful / not useful counts per memory").add_argument(
        "--archived", action="store_true", help="include archived memories")


def _verb(sub: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    parser.add_argument("--global", dest="user_wide", action="store_true",
                        help="the user-wide scope (preferences for every project) instead of this project")
    add_json(parser)
    return parser


def run(args: argparse.Namespace, app: App) -> int:
    from dataclasses import fields

    from ..operations import MemoryRequest, memory

    given = {f.name: getattr(args, f.name) for f in fields(MemoryRequest)
             if f.name != "action" and getattr(args, f.name, None) is not None}
    done = memory(app, MemoryRequest(args.action, **given))
    if args.json:
        print_json(done.to_json())
    else:
        RENDER.get(args.action, _render_one)(done.answer)
    if done.empty and not args.user_wide:
        print_where_data_is(app, all_projects=False)
    return 1 if done.empty and args.action == "search" else 0


def _line(m: dict[str, Any]) -> None:
    tags = f"  [{', '.join(m['tags'])}]" if m["tags"] else ""
    state = "  (archived)" if m["archived"] else ""
    print(f"{m['id']}  {m['confidence']:.2f}  {m['updated_at'][:16].replace('T', ' ')}{tags}{state}")
    print(f"    {one_line(m['content'])}")


def _render_list(result: dict[str, Any]) -> None:
    if not result["memories"]:
        print("no memories")
    for m in result["memories"]:
        _line(m)


def _render_one(result: dict[str, Any]) -> None:
    if "forgotten" in result:
        print(f"forgot {result['forgotten']} and its recall history")
        return
    created = result.get("created")
    verb = "updated" if created is None else "stored" if created else "already known; confidence raised:"
    print(f"{verb} {result['id']} (confidence {result['confidence']:.2f}"
          + (", archived)" if result["archived"] else ")"))


def _render_show(m: dict[str, Any]) -> None:
    lineage, recall = m["lineage"], m["recall"]
    print(f"{m['id']}  confidence {m['confidence']:.2f}" + ("  (archived)" if m["archived"] else ""))
    print(f"  created {m['created_at']}  updated {m['updated_at']}  origin {lineage['origin']}"
          + (f"  kind {lineage['kind']}" if lineage["kind"] else ""))
    if m["tags"]:
        print(f"  tags: {', '.join(m['tags'])}")
    if lineage["summaries"]:
        print(f"  summaries: {' '.join(lineage['summaries'])}")
    if lineage["messages"]:
        print(f"  messages: {' '.join(f'msg_{n}' for n in lineage['messages'])}")
    print(f"  surfaced {recall['surfaced']}  useful {recall['useful']}  not useful {recall['not_useful']}"
          f"  last surfaced {recall['last_surfaced_at'] or '-'}")
    print("--- content ---")
    print(m["content"])


def _render_review(result: dict[str, Any]) -> None:
    stale = result["candidates"]
    if not stale:
        print("no stale memories")
        return
    for m in stale:
        _line(m)
    print(f"{len(stale)} {'archived' if result['archived'] else 'candidates; archive them with --archive'}")


def _render_stats(result: dict[str, Any]) -> None:
    print_table([(r["id"], f"{r['confidence']:.2f}", r["surfaced"], r["useful"], r["not_useful"],
                  (r["last_surfaced_at"] or "-")[:16], one_line(r["content"], 60)) for r in result["memories"]],
                ["id", "confidence", "surfaced", "useful", "not useful", "last surfaced", "text"])


RENDER = {"list": _render_list, "search": _render_list, "show": _render_show, "review": _render_review,
          "stats": _render_stats}

COMMAND = CommandSpec(
    name="memory",
    help="durable memories of this project (or, with --global, of every project)",
    description=(
        "Memories are short durable insights (decisions, fixes, conventions, commands that worked) that LCM\n"
        "surfaces when a prompt is about them. Ids: mem_<N> (project), gmem_<N> (user-wide, --global)."
    ),
    configure=configure,
    run=run,
)
