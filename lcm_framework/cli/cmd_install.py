"""``lcm install [AGENT|all] [--dry-run] [--service]`` (``lcm uninstall`` shares this module).

The agents are the integrations plugins register (``lcm_register_agents``)."""

from __future__ import annotations

import argparse
import os

from ..app import App
from ..extensions import CommandSpec
from ..output import add_json


def configure(parser: argparse.ArgumentParser) -> None:
    _options(parser, install=True)


def configure_uninstall(parser: argparse.ArgumentParser) -> None:
    _options(parser, install=False)


def _options(parser: argparse.ArgumentParser, *, install: bool) -> None:
    from ..agents.registry import describe, registered
    from .output import wrapped

    agents = registered()
    parser.epilog = "hook events by agent:\n" + "\n".join(
        wrapped(f"{name} ({agent.display_name}): {', '.join(e.event for e in agent.events)}", "  ")
        for name, agent in agents.items())
    parser.add_argument("agent", nargs="?", default="all", choices=[*agents, "all"],
                        help=f"which agent: {describe(agents)}, or all (default)")
    parser.add_argument("--dry-run", action="store_true", help="print the unified diff, write nothing")
    parser.add_argument("--service", action="store_true",
                        help="also write a systemd user unit (Linux) or launchd agent (macOS) for the daemon"
                        if install else "also remove the daemon's systemd user unit or launchd agent that "
                        "`lcm install --service` wrote")
    add_json(parser)


def run_for(args: argparse.Namespace, app: App, *, install: bool) -> int:
    from ..agents.registry import registered
    from ..installer.agents import changes as agent_changes
    from ..installer.service import activation_hint, service_change
    from .output import print_json

    env = dict(os.environ)
    chosen = list(registered(app.plugins)) if args.agent == "all" else [args.agent]
    changes = [c for agent in chosen for c in agent_changes(agent, env, install=install, plugins=app.plugins)]
    if args.service:
        changes.append(service_change(env, install=install))
    report = []
    for change in changes:
        for note in change.notes:
            print(f"note: {note}")
        if args.dry_run:
            if change.changed:
                print(change.diff(), end="")
            backup = None
        else:
            backup = change.apply()
        report.append({"path": str(change.path), "changed": change.changed,
                       "backup": str(backup) if backup else None})
    if args.json:
        print_json({"dry_run": args.dry_run, "files": report})
    elif not args.dry_run:
        verb = "installed into" if install else "removed from"
        for row in report:
            state = f"{verb} {row['path']}" if row["changed"] else f"unchanged: {row['path']}"
            print(state + (f" (backup: {row['backup']})" if row["backup"] else ""))
        if install and args.service and any(r["changed"] for r in report[-1:]):
            print(f"enable the service with: {activation_hint()}")
    elif not any(r["changed"] for r in report):
        print("nothing to change")
    return 0


def run(args: argparse.Namespace, app: App) -> int:
    return run_for(args, app, install=True)


COMMAND = CommandSpec(
    name="install",
    help="add LCM's hooks and MCP server to your coding agents",
    description=(
        "Merges an `lcm hook <Event>` command for each hook event the agent sends (listed below) and the\n"
        "`lcm mcp` server into each agent's own configuration (the agents are the integrations plugins\n"
        "register). Existing entries are kept; each changed file gets a timestamped\n"
        ".lcm-backup-* copy; running it again changes nothing. `lcm uninstall` reverts it."
    ),
    configure=configure,
    run=run,
)
