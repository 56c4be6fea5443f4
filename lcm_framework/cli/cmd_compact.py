"""``lcm compact``: summarize old turns of the current project into the summary DAG."""

from __future__ import annotations

import argparse
import sys

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json
from .recall_common import add_all_projects, add_json, positive
from .where_data_is import hint_when_session_missing, print_where_data_is


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="compact one session (its id or a unique prefix)")
    which.add_argument("--all", action="store_true", help="compact every conversation of the project (default)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be summarized; change nothing")
    parser.add_argument(
        "--budget", type=positive, metavar="TOKENS",
        help="compact oldest first until each context is under TOKENS, then stop",
    )
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import CompactRequest, compact

    request = CompactRequest(session=args.session, budget=args.budget, dry_run=args.dry_run,
                             all_projects=args.all_projects)
    with hint_when_session_missing(app, all_projects=args.all_projects):
        done = compact(app, request, notify=lambda notice: print(notice, file=sys.stderr))
    reports, promotions = done.reports, done.promotions
    if done.fallback:
        print(f"lcm: {done.fallback}", file=sys.stderr)
    if args.json:
        print_json(done.to_json())
        if not reports:
            print_where_data_is(app, all_projects=args.all_projects)
        return 0
    verb = "would create" if args.dry_run else "created"
    for report in reports:
        if report.busy:
            status = "skipped: another process is compacting it"
        elif not report.action_taken:
            status = "up to date"
            if report.skipped_no_gain:
                status += " (the old messages are too short for a summary to save tokens)"
        else:
            depths = ", ".join(f"{n} at depth {d}" for d, n in sorted(report.created_by_depth.items()))
            status = (f"{verb} {report.summaries_created} summaries ({depths}); context "
                      f"{report.tokens_before:,} -> {report.tokens_after:,} tokens")
            fallbacks = report.outcomes.get("truncated", 0)
            if fallbacks:
                status += f"; {fallbacks} fell back to truncation"
        print(f"{report.session_id} (conversation {report.conversation_id}): {status}")
    total = sum(r.summaries_created for r in reports)
    projects = f" in {len(done.by_project)} project(s)" if args.all_projects else ""
    print(f"{len(reports)} conversation(s){projects}, {total} summaries {verb}")
    if not reports:
        print_where_data_is(app, all_projects=args.all_projects)
    for promoted in promotions:
        print(f"promoted: {len(promoted.created)} memories created, {len(promoted.reinforced)} reinforced"
              + (f" ({'; '.join(promoted.failures)})" if promoted.failures else ""))
    return 0


COMMAND = CommandSpec(
    name="compact",
    help="summarize old turns into the summary DAG",
    description=(
        "Full sweep per conversation: leaf summaries of the oldest raw messages outside the fresh tail\n"
        "(compaction.fresh_tail_count), then condensation of enough same-depth summaries. Nothing is\n"
        "deleted: `lcm expand ID --include-messages` recovers the originals. The summarizer is\n"
        "summarizer.provider's (`lcm doctor` names it). One compaction per conversation runs at a time,\n"
        "across processes."
    ),
    configure=configure,
    run=run,
)
