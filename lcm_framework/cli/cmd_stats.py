"""``lcm stats [--json] [--all]``: per project conversations, messages, summaries, compression, size."""

from __future__ import annotations

import argparse

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import human_size, print_json, print_table


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_json(parser)
    parser.add_argument("--current", action="store_true", help="only the current project")
    parser.add_argument("--storage", action="store_true",
                        help="bytes per table and index, per message and per transcript byte, compression")


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import StatsRequest, stats

    if args.storage:
        return _storage(args, app)
    found = stats(app, StatsRequest(project=str(app.config.project_root) if args.current else None))
    rows = found.projects
    if args.json:
        print_json(found.to_json())
        return 0
    if not rows:
        print("no projects stored yet (lcm import, or install the hooks: lcm install)")
        return 0
    table = [(
        r["root"], f"{r['conversations']} ({r['subagent_conversations']} sub-agent)"
        if r["subagent_conversations"] else r["conversations"], r["messages"],
        " ".join(f"d{d}:{n}" for d, n in r["summaries_by_depth"].items()) or "-",
        f"{r['compression_ratio']:.2f}x" if r["compression_ratio"] else "-",
        human_size(r["storage_bytes"]), sum(r["redactions"].values()),
    ) for r in rows]
    print_table(table, ["project", "conversations", "messages", "summaries", "compression", "size", "redactions"])
    return 0


def _storage(args: argparse.Namespace, app: App) -> int:
    from ..diagnostics import storage_report

    rows = storage_report(app, current_only=args.current)
    if args.json:
        print_json({"projects": rows})
        return 0
    for r in rows:
        per_byte = r["bytes_per_transcript_byte"]
        print(f"{r['root']}: {human_size(r['total_bytes'])} for {r['messages']} messages"
              + (f" ({r['bytes_per_message']} B each)" if r["bytes_per_message"] else "")
              + (f", {per_byte} stored bytes per transcript byte imported" if per_byte is not None else ""))
        print(f"  payloads {human_size(r['payload_bytes'])} plain, {human_size(r['stored_payload_bytes'])} "
              f"stored (compression saved {human_size(r['compression_saved_bytes'])}); "
              f"{human_size(r['free_bytes'])} free (lcm vacuum gives it back)")
        scope = " (the schema's, all projects)" if r["shared_objects"] else ""
        print_table([(name, human_size(size)) for name, size in r["objects"].items()], [f"table/index{scope}", "bytes"])
    return 0


COMMAND = CommandSpec(
    name="stats",
    help="per-project counts, summaries by depth, compression ratio, database size, redactions",
    description="Compression ratio = tokens of all stored messages / tokens currently in context.",
    configure=configure,
    run=run,
)
