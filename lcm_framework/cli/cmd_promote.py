"""``lcm promote``: turn durable insights of this project's summaries into memories now."""

from __future__ import annotations

import argparse

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json
from .recall_common import add_all_projects, add_json, project_names


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import PromoteRequest, promote

    done = promote(app, PromoteRequest(all_projects=args.all_projects))
    if args.json:
        print_json(done.to_json())
        return 0
    names = project_names(app, [pid for pid, _ in done.by_project]) if args.all_projects else {}
    for pid, report in done.by_project:
        where = f"project {names[pid]}: " if args.all_projects else ""
        print(f"{where}{report.summaries} summaries read ({report.extractor} extractor): "
              f"{len(report.created)} memories created, {len(report.reinforced)} reinforced")
        for failure in report.failures:
            print(f"  model failed, used the offline extractor: {failure}")
    return 0


COMMAND = CommandSpec(
    name="promote",
    help="promote durable insights of the summaries into memories",
    description=(
        "Reads every leaf summary and its source messages: decisions, root causes and fixes, conventions,\n"
        "commands that worked, constraints the user stated. With a model summarizer a model picks them\n"
        "(prompt template `promote`); with an offline one a deterministic extractor. Promoting again changes nothing;\n"
        "compaction promotes its new summaries by itself (memory.promote_after_compaction)."
    ),
    configure=configure,
    run=run,
)
