"""``lcm search QUERY``: ranked full-text recall over messages and summaries."""

from __future__ import annotations

import argparse

from ..app import App
from ..capabilities import add_options, bind, options
from ..extensions import CommandSpec
from ..recall_arguments import SEARCH
from .output import print_json
from .recall_common import add_json, one_line, origin, when
from .where_data_is import print_where_data_is


def configure(parser: argparse.ArgumentParser) -> None:
    add_options(parser, SEARCH)  # the lcm_search tool's arguments, defaults included
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import search_all

    v = bind(SEARCH, options(args, SEARCH))
    ranked = search_all(app, v["query"], all_projects=v["all_projects"], limit=v["limit"],
                        include_subagents=v["include_subagents"])
    if args.json:
        print_json([_row(r) for r in ranked])
        if not ranked:
            print_where_data_is(app, all_projects=v["all_projects"])
        return 0 if ranked else 1
    if not ranked:
        print(f"nothing found for {v['query']!r}")
        print_where_data_is(app, all_projects=v["all_projects"])
        return 1
    for r in ranked:
        covered = f"  (in {', '.join(r.covered_by)})" if r.covered_by else ""
        where = f" [{r.project_id[:8]}]" if v["all_projects"] else ""
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
