"""``lcm prompts [show NAME]``: which template wins, from where, and its text."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lcm_framework.plugin_api import CommandSpec
from lcm_framework.plugin_api.output import add_json, print_json, print_table
from lcm_framework.plugin_api.summarize import TEMPLATES, PromptRenderer

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Host, Plugins


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", help="every template with the source that provides it (default)")
    add_json(listing, default=argparse.SUPPRESS)
    show = sub.add_parser("show", help="print the Jinja text of one template")
    show.add_argument("name", help=f"template name without .j2 ({', '.join(TEMPLATES)})")
    add_json(show, default=argparse.SUPPRESS)
    add_json(parser)


def run(args: argparse.Namespace, app: Host) -> int:
    renderer = PromptRenderer(app.config, app.plugins)
    if args.action == "show":
        text, origin = renderer.template_source(args.name)
        if args.json:
            print_json({"name": args.name, "origin": origin, "source": text})
        else:
            print(f"# {args.name}: {origin}")
            print(text.rstrip("\n"))
        return 0
    available = renderer.available()
    if args.json:
        print_json([{"name": name, "origin": origin, "used_by_lcm": name in TEMPLATES}
                    for name, origin in available.items()])
    else:
        print_table([(name, origin) for name, origin in available.items()], ("template", "origin"))
    return 0


COMMAND = CommandSpec(
    name="prompts",
    help="list the prompt templates and where each comes from, or show one",
    description=(
        "Templates come from the override directory (prompts.override_dir, or $LCM_HOME/prompts/ when it "
        "exists), then prompt-source plugins by priority. `lcm prompts` lists which source wins for each "
        "template; `lcm prompts show NAME` prints its Jinja text."
    ),
    configure=configure,
    run=run,
)
