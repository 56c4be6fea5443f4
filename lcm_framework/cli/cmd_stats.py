"""``lcm stats [--json] [--all]``: per project conversations, messages, summaries, compression, size."""

from __future__ import annotations

import argparse

from ..app import App
from ..extensions import CommandSpec
from .output import print_json, print_table


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--current", action="store_true", help="only the current project")


def run(args: argparse.Namespace, app: App) -> int:
    from ..diagnostics import project_stats

    rows = project_stats(app)
    if args.current:
        rows = [r for r in rows if r["root"] == str(app.config.project_root)]
    if args.json:
        print_json({"projects": rows})
        return 0
    if not rows:
        print("no projects stored yet (lcm import, or install the hooks: lcm install)")
        return 0
    table = [(
        r["root"], f"{r['conversations']} ({r['subagent_conversations']} sub-agent)"
        if r["subagent_conversations"] else r["conversations"], r["messages"],
        " ".join(f"d{d}:{n}" for d, n in r["summaries_by_depth"].items()) or "-",
        f"{r['compression_ratio']:.2f}x" if r["compression_ratio"] else "-",
        _size(r["storage_bytes"]), sum(r["redactions"].values()),
    ) for r in rows]
    print_table(table, ["project", "conversations", "messages", "summaries", "compression", "size", "redactions"])
    return 0


def _size(value: int | None) -> str:
    if value is None:
        return "-"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


COMMAND = CommandSpec(
    name="stats",
    help="per-project counts, summaries by depth, compression ratio, database size, redactions",
    description="Compression ratio = tokens of all stored messages / tokens currently in context.",
    configure=configure,
    run=run,
)
