"""``lcm plugins``: what is installed and what each plugin registered."""

from __future__ import annotations

import argparse
from typing import Any

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import print_json, terminal_width, wrapped

KINDS = {
    "formats": "format",
    "rule_packs": "rule_pack",
    "summarizers": "summarizer",
    "prompt_sources": "prompt_source",
    "storage_backends": "storage_backend",
    "settings": "setting",
    "capabilities": "capability",
    "commands": "command",
    "agents": "agent",
}


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("--all", action="store_true", help="include built-in plugins and load failures")
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    plugins = app.plugins
    # Trigger every registry so provenance is known.
    plugins.formats()
    plugins.rule_packs(app.config)
    plugins.summarizers()
    plugins.prompt_sources()
    plugins.storage_backends()
    plugins.settings()
    plugins.capabilities()
    plugins.commands()
    plugins.agents()
    rows: list[dict[str, Any]] = []
    for name, info in sorted(plugins.infos.items()):
        builtin = info.distribution == "lcm-framework"
        if builtin and not args.all:
            continue
        registered: dict[str, list[str]] = {}
        for label, kind in KINDS.items():
            names = sorted(n for n, owner in plugins.provenance(kind).items() if owner == name)
            if names:
                registered[label] = names
        rows.append(
            {
                "name": name,
                "distribution": info.distribution,
                "version": info.version,
                "builtin": builtin,
                "hooks": list(info.hooks),
                "registered": registered,
            }
        )
    failures = [{"name": f.name, "distribution": f.distribution, "error": f.error} for f in plugins.failures]
    if args.json:
        print_json({"plugins": rows, "failures": failures} if args.all else rows)
        return 0
    if not rows:
        print("No third-party plugins installed. `lcm plugins --all` lists the built-in ones too.")
    width = terminal_width()
    for r in rows:  # a block per plugin, wrapped to the terminal: a table of them is hundreds of columns wide
        print(wrapped(f"{r['name']}  ({r['distribution']} {r['version']})", width=width))
        print(wrapped(f"hooks: {', '.join(h.removeprefix('lcm_') for h in r['hooks'])}", "    ", width))
        for kind, names in r["registered"].items():
            print(wrapped(f"{kind}: {', '.join(names)}", "    ", width))
    for f in failures:
        print(wrapped(f"failed: {f['name']} ({f['distribution']}): {f['error']}", width=width))
    return 0


COMMAND = CommandSpec(
    name="plugins",
    help="list installed plugins and what they register",
    description="List plugins: name, distribution, version, hooks and what each registered.",
    configure=configure,
    run=run,
)
