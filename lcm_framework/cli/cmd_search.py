"""``lcm search QUERY``: ranked full-text recall over messages and summaries."""

from __future__ import annotations

import argparse

from ..app import App
from ..extensions import CommandSpec
from .output import print_json
from .recall_common import add_all_projects, add_json, add_no_subagents, one_line, origin, positive, when


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", metavar="QUERY", help="words to look for")
    parser.add_argument("--limit", type=positive, default=20, help="maximum results (default 20)")
    add_no_subagents(parser)
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import search_all

    ranked = search_all(app, args.query, all_projects=args.all_projects, limit=args.limit,
                        include_subagents=not args.no_subagents)
    if args.json:
        print_json([_row(r) for r in ranked])
        return 0 if ranked else 1
    if not ranked:
        print(f"nothing found for {args.query!r}")
        return 1
    for r in ranked:
        covered = f"  (in {', '.join(r.covered_by)})" if r.covered_by else ""
        where = f" [{r.project_id[:8]}]" if args.all_projects else ""
        print(f"{r.rank:>3}. {r.hit.id}{where}  {when(r.hit.created_at)}  score {r.hit.score:.3g}{covered}")
        print(f"     {one_line(r.hit.snippet)}{origin(r.hit)}")
    return 0


def _row(r: object) -> dict[str, object]:
    from ..jsonable import to_jsonable

    data = to_jsonable(r)
    return {"project_id": data["project_id"], **data["hit"], "covered_by": data["covered_by"], "rank": data["rank"]}


COMMAND = CommandSpec(
    name="search",
    help="ranked search over messages and summaries",
    description="Best matches first. Exit status 1 when nothing is found.",
    configure=configure,
    run=run,
)
