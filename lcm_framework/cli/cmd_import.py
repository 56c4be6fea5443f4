"""``lcm import``: import agent transcripts in every registered format, resumably."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import Progress, print_json

DESCRIPTION = """\
Import agent transcripts into LCM. With no PATH, the default sessions
directories of every registered transcript format are scanned (each format
honours its agent's own environment variables; `lcm plugins --all` lists the
formats).
A PATH may be a transcript file or a directory; the format is detected from
the content. Each session is stored in the project of the working directory
it ran in (override with --project).

Import is resumable and idempotent: every file keeps a checkpoint, re-running
imports only what is new, and an interrupted run continues where it stopped.
Secrets are scrubbed before anything is stored; a line that cannot be read or
scrubbed safely is quarantined locally (metadata only) and its neighbours
still import.

examples:
  lcm import                         every agent's sessions
  lcm import --provider NAME         only the sessions of one provider's formats
  lcm import path/to/session.jsonl   one transcript file
  lcm import --dry-run --json DIR    what would be imported, as JSON
  lcm import --workers 1 DIR         a single process (default: one per CPU for large imports)
"""


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                        help="transcript files or directories (default: every format's sessions directories)")
    parser.add_argument("--provider", default="all", metavar="NAME",
                        help="only formats of this provider (a format's short provider name), or all (default)")
    parser.add_argument("--project", dest="import_project", type=Path, metavar="PATH",
                        help="store every session in this project instead of its working directory's")
    parser.add_argument("--dry-run", action="store_true",
                        help="read, scrub and count, but write nothing (no database, no quarantine)")
    parser.add_argument("--batch-size", type=int, metavar="N",
                        help="records per transaction, 1-1000 (default: import.batch_size = 100)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="processes to import with, this one included, a file each at a time (default: "
                             "import.workers = 0, one per CPU when there are 8 MiB or more; 1: this process)")
    add_json(parser)


class _Bar:
    """Turns per-file byte progress (of several files at once, with workers) into one bar."""

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self.done_before = 0
        self.current: dict[Path | None, int] = {}

    def __call__(self, event: object) -> None:
        from ..ingest import ProgressEvent

        assert isinstance(event, ProgressEvent)
        if event.kind == "start":
            self.bar = Progress(event.bytes_total, "importing")
        elif self.bar is not None:
            if event.kind == "file_done":
                self.done_before += event.bytes_total
                self.current.pop(event.path, None)
            else:
                self.current[event.path] = event.bytes_done
            done = self.done_before + sum(self.current.values())
            self.bar.advance(done - self.bar.done, event.path.name if event.path else "")

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.finish()


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import ImportRequest, import_transcripts

    bar = _Bar()
    progress: Callable[[object], None] | None = bar if sys.stderr.isatty() and not args.json else None
    request = ImportRequest(tuple(args.paths), provider=args.provider, project=args.import_project,
                            dry_run=args.dry_run, batch_size=args.batch_size, workers=args.workers)
    try:
        done = import_transcripts(app, request, progress=progress)
    finally:
        bar.finish()
    if args.json:
        print_json(done.to_json())
    else:
        _print_summary(done.to_json(), sys.stdout, str(app.config.project_root))
    return 1 if done.failed else 0


def _print_summary(summary: dict[str, object], out: TextIO, current_root: str) -> None:
    by_status = summary["files_by_status"]
    assert isinstance(by_status, dict)
    statuses = ", ".join(f"{n} {s}" for s, n in by_status.items())
    out.write(_headline(summary, statuses))
    for label in ("quarantined", "redactions"):
        counts = summary[label]
        assert isinstance(counts, dict)
        total = sum(counts.values())
        detail = ", ".join(f"{k} {v}" for k, v in counts.items())
        out.write(f"{label}: {total}" + (f" ({detail})" if detail else "") + "\n")
    conversations = summary["conversations"]
    assert isinstance(conversations, list)
    touched = [c for c in conversations if c["new_messages"]]
    if touched:
        out.write(f"conversations with new messages: {len(touched)}\n")
    _print_projects(summary, current_root, out)
    errors = summary["errors"]
    assert isinstance(errors, list)
    for error in errors:
        out.write(f"error: {error['path']}: {error['message']} [{error['code']}]\n")


def _headline(summary: dict[str, object], statuses: str) -> str:
    """The first line: what was (or would be) imported, or a sentence saying nothing new was."""
    files, dry = summary["files"], summary["dry_run"]
    if not files:
        return "nothing to import: no transcript files found\n"
    if not summary["messages"] and not summary["stored"]:
        verb = "would be imported" if dry else "was imported"
        held = f"; {summary['skipped']} records read were already stored" if summary["skipped"] else ""
        return f"nothing new {verb}: {files} transcript files ({statuses}){held}\n"
    prefix = "would import" if dry else "imported"
    return (f"{prefix}: {files} files ({statuses}), {summary['bytes']} bytes, {summary['records']} records, "
            f"{summary['messages']} new messages, {summary['stored']} new native records, "
            f"{summary['skipped']} already stored\n")


def _print_projects(summary: dict[str, object], current_root: str, out: TextIO) -> None:
    """The projects that got new messages, and how to reach them when this directory's is not one."""
    from ..output import terminal_safe

    projects = summary["projects"]
    assert isinstance(projects, list)
    if not projects:
        return
    out.write("new messages by project:\n")
    for p in projects:
        runs = f" and {p['subagent_runs']} sub-agent runs" if p["subagent_runs"] else ""
        out.write(f"  {terminal_safe(p['project_root'])}: {p['sessions']} sessions{runs}, "
                  f"{p['new_messages']} messages\n")
    if all(p["project_root"] != current_root for p in projects):
        out.write("none is this directory's project: reach them with --all-projects (lcm search/grep/compact ...) "
                  "or `lcm --project ROOT COMMAND`; `lcm sessions --all-projects` lists them\n")


COMMAND = CommandSpec(
    name="import",
    help="import agent transcripts (resumable, scrubbed)",
    description=DESCRIPTION,
    configure=configure,
    run=run,
)
