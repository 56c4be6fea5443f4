"""``lcm export -o FILE``: this project (or every project) as portable records."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from .recall_common import add_all_projects


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="FILE",
                        help="where to write the records (JSON Lines; '-' for standard output); written beside "
                             "FILE and renamed into place. A symbolic link or non-regular file there is refused")
    parser.add_argument("--force", action="store_true",
                        help="replace FILE if it already exists (without it an existing FILE is refused)")
    parser.add_argument("--memories-only", action="store_true",
                        help="only memories (with tags, confidence, lineage and recall history)")
    add_all_projects(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import ExportRequest, export_records
    from ..safe_paths import check_output, write_output

    request = ExportRequest(all_projects=args.all_projects, memories_only=args.memories_only)
    if str(args.output) == "-":
        count = export_records(app, request, sys.stdout).records
    else:
        import io

        check_output(args.output, replace=args.force)
        buffer = io.StringIO()
        count = export_records(app, request, buffer).records
        write_output(args.output, buffer.getvalue().encode("utf-8"), replace=args.force)
    print(f"exported {count} records to {args.output}", file=sys.stderr)
    return 0


COMMAND = CommandSpec(
    name="export",
    help="write this project's records (or every project's) to a portable file",
    description=(
        "A versioned, backend-neutral JSON Lines file: a header, then per project its conversations\n"
        "(messages, parts, large files, summaries with lineage, context, native records) and its memories\n"
        "(tags, confidence, lineage, recall history). `lcm import-records FILE` reads it into any backend."
    ),
    configure=configure,
    run=run,
)
