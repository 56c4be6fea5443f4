"""``lcm verify``: prove every stored message is reachable from its conversation's context."""

from __future__ import annotations

import argparse
from typing import Any

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json
from .recall_common import add_all_projects, add_json, project_names
from .where_data_is import print_where_data_is


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import project_scopes, verify

    with project_scopes(app, args.all_projects) as scopes:
        reports = [verify(storage) for storage in scopes]
    ok = all(r.ok for r in reports)
    empty = not any(r.conversations for r in reports)
    if args.json:
        rows = [{"ok": r.ok, "project_id": r.project_id, "conversations": r.conversations} for r in reports]
        current = rows[0] if rows else {"ok": True, "project_id": app.project_ref().project_id, "conversations": []}
        print_json({"ok": ok, "projects": rows} if args.all_projects else current)
        if empty:
            print_where_data_is(app, all_projects=args.all_projects)
        return 0 if ok else 1
    names = project_names(app, [r.project_id for r in reports]) if args.all_projects else {}
    for report in reports:
        if args.all_projects:
            print(f"== project {names[report.project_id]}")
        _print_report(report)
    print("verified: every message is reachable" if ok else "verify FAILED: see above")
    if empty:
        print_where_data_is(app, all_projects=args.all_projects)
    return 0 if ok else 1


def _print_report(report: Any) -> None:
    for check in report.conversations:
        run = f"; sub-agent of {check.subagent_of}" if check.subagent_of else ""
        if check.ok:
            print(f"ok    {check.session_id} (conversation {check.conversation_id}): "
                  f"{check.messages} messages reachable{run}")
            continue
        print(f"FAIL  {check.session_id} (conversation {check.conversation_id}): {check.reachable} of "
              f"{check.messages} messages reachable")
        if check.unreachable:
            print("      unreachable: " + " ".join(f"msg_{m}" for m in check.unreachable))
        if check.duplicated:
            print("      reached more than once: " + " ".join(f"msg_{m}" for m in check.duplicated))
        if check.dangling:
            print("      missing summaries: " + " ".join(check.dangling))
        for problem in check.link_problems:
            print(f"      sub-agent link: {problem}")


COMMAND = CommandSpec(
    name="verify",
    help="check that every stored message is reachable through the summary DAG",
    description=(
        "For each conversation, walks the context: raw messages, and summaries down their lineage to\n"
        "the source messages. Exit status 1 with a report when a message is unreachable, reached twice,\n"
        "or a summary is missing."
    ),
    configure=configure,
    run=run,
)
