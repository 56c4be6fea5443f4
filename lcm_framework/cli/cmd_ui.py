"""``lcm ui [--port N] [--open]``: the local web explorer of every session, summary, memory and context."""

from __future__ import annotations

import argparse
import sys

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins

DEFAULT_PORT = 8765


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                        help=f"port on 127.0.0.1 (default: {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--open", action="store_true", help="open the login URL in the default browser")


def run(args: argparse.Namespace, app: App) -> int:
    from ..ui.server import serve

    if not 0 <= args.port <= 65535:
        print("lcm ui: --port must be 0..65535", file=sys.stderr)
        return 2

    def announce(url: str) -> None:
        print(f"lcm ui: serving on 127.0.0.1 only; open this one-time login URL:\n{url}", flush=True)
        print("(later logins: the form at /login takes the token in $LCM_HOME/daemon.token; Ctrl-C stops)",
              flush=True)

    return serve(app, args.port, open_browser=args.open, announce=announce)


COMMAND = CommandSpec(
    name="ui",
    help="a local web explorer: projects, sessions, transcripts, summary DAG, context, search, memories, health",
    description=(
        "Serves a web explorer on 127.0.0.1 only (one instance per LCM_HOME) and prints a one-time login URL\n"
        "(a cookie after; the daemon's bearer token also logs in). Every page is also JSON at the same path\n"
        "+ .json. Requests from other sites or another Host are refused; changes need the page's CSRF token.\n"
        "See docs/ui.md."
    ),
    configure=configure,
    run=run,
)
