"""``lcm import-records FILE``: read portable records into the configured backend (idempotent, resumable)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .output import print_json
from .recall_common import add_json


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="a file written by `lcm export`")
    parser.add_argument("--here", action="store_true",
                        help="import a one-project file into this project instead of the project it names")
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..portable.importer import import_file

    report = import_file(app, args.file, here=args.here)
    if args.json:
        print_json(report)
        return 0
    if report.resumed_after_line:
        print(f"resumed after line {report.resumed_after_line}")
    for kind in sorted(set(report.applied) | set(report.skipped)):
        print(f"{kind}: {report.applied.get(kind, 0)} imported, {report.skipped.get(kind, 0)} already present")
    for conflict in report.conflicts:
        print(f"conflict: {conflict}")
    if not report.applied and not report.skipped:
        print("nothing to import")
    return 0


COMMAND = CommandSpec(
    name="import-records",
    help="read a file written by `lcm export` (idempotent; resumes after a kill)",
    description=(
        "Records already present (same content digest) are skipped, so a second import adds nothing.\n"
        "Every line is checked first (field types, id formats, absolute project roots, its digest, which\n"
        "every record must carry) and every text is scrubbed again before it is stored; a bad line is an\n"
        "error naming it (exit 2). A file of a newer format version is refused."
    ),
    configure=configure,
    run=run,
)
