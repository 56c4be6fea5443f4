"""``lcm vacuum [--all-projects] [--json]``: rewrite payloads with the newest codec, give free space back."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import human_size, print_json
from .recall_common import add_all_projects, add_json, project_names


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import project_scopes

    def shown(done: int) -> None:
        if not args.json:
            print(f"\r  {done} row(s) rewritten", end="", file=sys.stderr, flush=True)

    rows = []
    with project_scopes(app, args.all_projects) as scopes:
        for storage in scopes:
            report = storage.compact_storage(progress=shown)
            rows.append({"project_id": storage.project_id, **asdict(report)})
            if args.json:
                continue
            if report.recompressed:
                print(file=sys.stderr)
            name = project_names(app, [storage.project_id])[storage.project_id]
            print(f"{name}: {human_size(report.bytes_before)} -> "
                  f"{human_size(report.bytes_after)}; {report.recompressed} row(s) recompressed; {report.detail}")
    if args.json:
        print_json({"projects": rows})
    return 0


COMMAND = CommandSpec(
    name="vacuum",
    help="compress old rows with the newest codec and give free space back (online-safe)",
    description=(
        "Rewrites payloads stored before the project's compression dictionary existed, in short\n"
        "transactions (hooks wait milliseconds), then gives free pages back. On SQLite a database created\n"
        "before LCM enabled incremental auto-vacuum, or with larger pages than LCM now creates, gets one full\n"
        "VACUUM first, which blocks writers while it runs (hooks queue in the outbox meanwhile); the page size\n"
        "changes only while no other process has the database open. On PostgreSQL autovacuum does this;\n"
        "nothing to rewrite."
    ),
    configure=configure,
    run=run,
)
