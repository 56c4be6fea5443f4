"""``lcm daemon start [--foreground] | stop | restart | status``."""

from __future__ import annotations

import argparse

from ..app import App
from ..errors import LcmError
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import print_json


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    start = sub.add_parser("start", help="start the daemon in the background (waits until it answers)")
    start.add_argument("--foreground", action="store_true", help="run in this process until SIGTERM/Ctrl-C")
    sub.add_parser("stop", help="stop the daemon (it drains work in flight first)")
    sub.add_parser("restart", help="stop, then start in the background")
    st = sub.add_parser("status", help="is the daemon running, and what is it doing")
    add_json(st)


def run(args: argparse.Namespace, app: App) -> int:
    from ..daemon_client import lifecycle

    home = app.config.home
    port = int(app.config.get("daemon.port"))
    if args.action == "start" and args.foreground:
        from ..daemon.server import serve

        return serve(app.config, app.plugins, {**app.config.flags, "daemon.port": port})
    if args.action in ("stop", "restart"):
        try:
            stopped = lifecycle.stop(home, port)
        except RuntimeError as exc:
            raise LcmError(str(exc)) from None
        if args.action == "stop":
            print("daemon stopped" if stopped else "daemon was not running")
            return 0
    if args.action in ("start", "restart"):
        try:
            found = lifecycle.start_background(home, port, env=app.config.child_env())
        except RuntimeError as exc:
            raise LcmError(str(exc)) from None
        print(f"daemon running on 127.0.0.1:{found.port} (pid {found.pid})")
        return 0
    return _status(app, port, as_json=args.json)


def _status(app: App, port: int, *, as_json: bool) -> int:
    from ..daemon_client.client import DaemonClient, DaemonRequestError, DaemonUnavailable
    from ..daemon_client.lifecycle import state

    current = state(app.config.home, port)
    detail = None
    if current.healthy:
        try:
            detail = DaemonClient.for_home(app.config.home, port).request("GET", "/status")
        except (DaemonUnavailable, DaemonRequestError) as exc:
            detail = {"error": str(exc)}
    if as_json:
        print_json({"running": current.running, "healthy": current.healthy, "pid": current.pid, "port": port,
                    "status": detail})
    elif current.healthy and detail is not None:
        print(f"daemon: running on 127.0.0.1:{port} (pid {detail.get('pid')}, up {detail.get('uptime_s')} s)")
        print(f"projects served: {len(detail.get('projects') or [])}, in flight: {detail.get('in_flight')}")
    elif current.running:
        print(f"daemon: process {current.pid} exists but does not answer on 127.0.0.1:{port}")
    else:
        print("daemon: not running (start it with `lcm daemon start`)")
    return 0 if current.healthy else 3


COMMAND = CommandSpec(
    name="daemon",
    help="run the local LCM daemon used by the agent hooks",
    description=(
        "The daemon listens on 127.0.0.1:<daemon.port> (default 3737). Every route except GET /health needs\n"
        "the bearer token kept in $LCM_HOME/daemon.token (0600); LCM's clients send it only after the daemon\n"
        "proved it holds it (GET /health?challenge=...). Requests need a 127.0.0.1 or localhost Host and no\n"
        "Origin, and have daemon.request_timeout_s to arrive. Its pid file and log are\n"
        "$LCM_HOME/daemon.pid and $LCM_HOME/daemon.log."
    ),
    configure=configure,
    run=run,
)
