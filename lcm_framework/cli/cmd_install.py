"""``lcm install [AGENT|all] [--dry-run] [--service]`` (``lcm uninstall`` shares this module).

The agents are the integrations plugins register (``lcm_register_agents``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..app import App
from ..errors import LcmError
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json

if TYPE_CHECKING:
    from ..agents.contracts import AgentIntegration


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    _options(parser, plugins, install=True)


def configure_uninstall(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    _options(parser, plugins, install=False)


def _options(parser: argparse.ArgumentParser, plugins: Plugins, *, install: bool) -> None:
    from ..agents.registry import describe, registered
    from .output import wrapped

    agents = registered(plugins)
    parser.epilog = "hook events by agent:\n" + "\n".join(
        wrapped(f"{name} ({agent.display_name}): {', '.join(e.event for e in agent.events)}", "  ")
        for name, agent in agents.items())
    parser.add_argument("agent", nargs="?", default="all", choices=[*agents, "all"],
                        help=f"which agent: {describe(agents)}, or all (default: install into every agent "
                             "installed here, uninstall from all)")
    parser.add_argument("--agent", dest="agents", action="append", default=[], choices=list(agents),
                        metavar="NAME", help="this agent, even when it is not installed here (repeat for more)")
    parser.add_argument("--dry-run", action="store_true", help="print the unified diff, write nothing")
    parser.add_argument("--service", action="store_true",
                        help="also write a systemd user unit (Linux) or launchd agent (macOS) for the daemon"
                        if install else "also remove the daemon's systemd user unit or launchd agent that "
                        "`lcm install --service` wrote")
    add_json(parser)


def chosen_agents(args: argparse.Namespace, agents: Mapping[str, AgentIntegration], env: Mapping[str, str], *,
                  install: bool) -> tuple[list[str], dict[str, str]]:
    """The agents to change, and why each other one is skipped: the named ones, else (install) those installed
    here, else (uninstall) all (removing creates nothing)."""
    named = list(dict.fromkeys([*args.agents, *([] if args.agent == "all" else [args.agent])]))
    if named or not install:
        return named or list(agents), {}
    present = [name for name, agent in agents.items() if agent.present(env)]
    skipped = {name: f"{agent.display_name}: no {agent.config_dir(env)}, not on PATH"
               for name, agent in agents.items() if name not in present}
    return present, skipped


def run_for(args: argparse.Namespace, app: App, *, install: bool) -> int:
    from ..agents.registry import registered
    from ..installer.agents import changes as agent_changes
    from ..installer.ledger import Ledger
    from ..installer.service import activation_hint, service_change
    from .output import print_json

    env = dict(os.environ)
    chosen, skipped = chosen_agents(args, registered(app.plugins), env, install=install)
    if not chosen and not args.service:
        raise LcmError(f"no coding agent is installed here ({'; '.join(skipped.values())}); to install into "
                       "one anyway, name it: lcm install --agent NAME")
    ledger = Ledger(app.config.home)
    changes = [c for agent in chosen for c in agent_changes(agent, env, install=install, plugins=app.plugins)]
    if args.service:
        changes.append(service_change(env, install=install))
    changes = [c for c in changes if c.before is not None or c.after is not None]  # not there, not to be
    report = []
    for change in (ledger.plan(c, install=install) for c in changes):
        backup = None if args.dry_run else ledger.apply(change, install=install)
        row: dict[str, Any] = {"path": str(change.path), "changed": change.changed,
                                  "backup": str(backup) if backup else None, "notes": list(change.notes)}
        if args.dry_run:
            row["diff"] = change.diff() if change.changed else ""
        report.append(row)
    if not args.dry_run:
        ledger.save()
    if args.json:
        print_json({"dry_run": args.dry_run, "agents": chosen, "skipped": skipped, "files": report})
        return 0
    for name, why in skipped.items():
        print(f"skipped {why} (`lcm install --agent {name}` installs into it anyway)")
    for row in report:
        for note in row["notes"]:
            print(f"note: {note}")
        if args.dry_run:
            print(row["diff"], end="")
    if args.dry_run:
        if not any(r["changed"] for r in report):
            print("nothing to change")
        return 0
    verb = "installed into" if install else "removed from"
    for row in report:
        state = f"{verb} {row['path']}" if row["changed"] else f"unchanged: {row['path']}"
        print(state + (f" (backup: {row['backup']})" if row["backup"] else ""))
    if install and args.service and any(r["changed"] for r in report[-1:]):
        print(f"enable the service with: {activation_hint()}")
    return 0


def run(args: argparse.Namespace, app: App) -> int:
    return run_for(args, app, install=True)


COMMAND = CommandSpec(
    name="install",
    help="add LCM's hooks and MCP server to your coding agents",
    description=(
        "Merges an `lcm hook <Event>` command for each hook event the agent sends (listed below) and the\n"
        "`lcm mcp` server into each agent's own configuration (the agents are the integrations plugins\n"
        "register) that are installed here, or the ones named. Existing entries are\n"
        "kept; the text each write replaces is backed up under $LCM_HOME/backups (the newest 3 per file);\n"
        "running it again changes nothing. `lcm uninstall` restores the files as they were."
    ),
    configure=configure,
    run=run,
)
