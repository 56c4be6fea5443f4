"""``lcm hook EVENT [--agent NAME] [--protocol MODULE]``: the command agents run on their hook events.

``lcm hook ...`` normally takes the fast path in ``cli/main.py`` (no plugin
loading); this spec gives it ``--help`` and serves ``lcm --project X hook ...`` and
``lcm --set daemon.port=N hook ...``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    """The hot path's own options (``agent_hooks.runner.OPTIONS``: names and checks), with their help; at a
    terminal ``--agent`` also names the registered integrations as its choices."""
    from ..agent_hooks.events import EVENTS
    from ..agent_hooks.runner import FLAG, OPTIONS
    from ..agents.registry import describe, registered

    agents = registered(plugins)

    helps = {
        "--agent": f"the agent sending the event, one of the registered integrations: {describe(agents)} (as "
                   "agents run it, the hook loads no plugin and passes on any well-formed name, which the daemon "
                   "only records)",
        "--protocol": "the agent integration's hook protocol module (lcm install writes it): it reads the "
                      "agent's hook JSON and writes the context the way the agent reads it",
        "--timeout": "seconds allowed for the daemon call (at most 600)",
    }
    parser.add_argument("event", help=f"LCM's hook event: {', '.join(EVENTS)} (an agent's integration installs "
                                      "each under the agent's own event name; any other event ingests the "
                                      "session's transcript)")
    for name, (field, metavar, check) in OPTIONS.items():
        chosen = {"choices": list(agents), "metavar": None} if name == "--agent" else {"metavar": metavar}
        parser.add_argument(name, dest=field, type=_checked(check), default=None, help=helps[name], **chosen)
    parser.add_argument(FLAG, dest="flat", action="store_true",
                        help="print the context as a top-level additionalContext (agents that read it there)")


def _checked(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """``check`` as an argparse type: its ValueError is argparse's usage error."""
    def parse(value: str) -> Any:
        try:
            return check(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def run(args: argparse.Namespace, app: App) -> int:
    """The hook as the fast path runs it, with the daemon settings this command's configuration resolved
    (``--set daemon.port=...`` included) given to it as the environment variables that override the rest."""
    import os
    import sys

    from ..agent_hooks.runner import HookArgs, read_stdin
    from ..agent_hooks.runner import run as run_hook

    env = {**os.environ, "LCM_DAEMON_PORT": str(app.config.get("daemon.port")),
           "LCM_DAEMON_AUTOSTART": "true" if app.config.get("daemon.autostart") else "false"}
    hook = HookArgs(args.event, args.agent, args.timeout_s, args.flat, args.protocol)
    return run_hook(hook, read_stdin(sys.stderr), out=sys.stdout, err=sys.stderr, env=env)


COMMAND = CommandSpec(
    name="hook",
    help="handle an agent hook event read as JSON on stdin (always exits 0)",
    description=(
        "Reads an agent's hook JSON on stdin and forwards it to the daemon within one total time budget,\n"
        "once the daemon proved it holds this LCM_HOME's token. SessionStart prints the restored context\n"
        "(the way --protocol says the agent reads it; else hookSpecificOutput.additionalContext);\n"
        "Stop ingests the new part of the transcript; PreCompact and SessionEnd ingest and compact.\n"
        "When the daemon or storage is unavailable the event goes to $LCM_HOME/outbox.db and the daemon\n"
        "(started in the background unless daemon.autostart = false) replays it. Never fails the agent."
    ),
    configure=configure,
    run=run,
)
