"""``lcm describe ID``: a summary, message or large file with metadata, lineage and full content."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from ..app import App
from ..kernel.arguments import add_options
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..recall.arguments import DESCRIBE
from .output import print_json, wrapped
from .recall_common import add_json, project_names


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_options(parser, DESCRIBE, names=("id", "all_projects"))  # the CLI prints the content in full
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import DescribeRequest, describe

    every = bool(args.all_projects)
    described = describe(app, DescribeRequest(args.id, all_projects=every))  # content in full
    if args.json:
        print_json(described.to_json())
        return 0
    found = described.found
    names = project_names(app, [item.project_id for item in found]) if every else {}
    for item in found:
        print(f"{item.id} ({item.kind.value})"
              + (f" session {item.session_id}" if item.session_id else "")
              + (f" conversation {item.conversation_id}" if item.conversation_id is not None else "")
              + (f" project {names[item.project_id]}" if every else ""))
        for key, value in item.metadata.items():
            if key != "exploration_summary":
                _print_field(key, value, "  ")
        for key, ids in item.lineage.items():
            if ids:
                print(wrapped(f"{key} ({len(ids)}): {' '.join(ids)}", "  "))
        if item.metadata.get("exploration_summary"):
            print("  exploration summary:\n    " + str(item.metadata["exploration_summary"]).replace("\n", "\n    "))
        print("--- content ---")
        print(item.content)
    return 0


def _print_field(key: str, value: Any, indent: str) -> None:
    """``key: value`` as a person reads it: a mapping as indented fields, a list of mappings as ``-`` items,
    other lists comma-separated; nothing for an empty value."""
    if value is None or value == "" or value == [] or value == {}:
        return
    if isinstance(value, dict):
        print(f"{indent}{key}:")
        for name, item in value.items():
            _print_field(name, item, indent + "  ")
    elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
        print(f"{indent}{key}:")
        for entry in value:
            fields = entry.items() if isinstance(entry, dict) else [("-", entry)]
            for n, (name, item) in enumerate(fields):
                _print_field(name, item, indent + ("- " if n == 0 else "  "))
    elif isinstance(value, list):
        print(wrapped(f"{key}: {', '.join(_scalar(item) for item in value)}", indent))
    else:
        print(f"{indent}{key}: {_scalar(value)}")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


COMMAND = CommandSpec(
    name="describe",
    help="show a summary, message or large file in full",
    description=(
        "Ids: sum_<hex> (summary), msg_<number> (message, numbered per project), file_<hex> (large file),\n"
        "mem_<number> (memory: lineage names the summaries and messages it was promoted from).\n"
        "Shows metadata, lineage (parents/children/source messages, covering summaries) and the full content."
    ),
    configure=configure,
    run=run,
)
