"""``lcm status [--json]``: one screen with the daemon, the storage backend, projects and the outbox."""

from __future__ import annotations

import argparse

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import print_json


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import StatusRequest, status

    snap = status(app, StatusRequest()).snapshot
    if args.json:
        print_json(snap)
        return 0
    daemon, backend, outbox = snap["daemon"], snap["backend"], snap["outbox"]
    print(f"daemon:   {'running' if daemon['running'] else 'not running'} on 127.0.0.1:{daemon['port']}"
          + (f" (pid {daemon['pid']})" if daemon["pid"] else ""))
    print(f"backend:  {backend['name']} ({backend.get('state', '?')})"
          + (f": {backend['detail']}" if backend.get("detail") else ""))
    print(f"projects: {len(snap['projects'])} stored; current: {snap['current_project']}")
    for project in snap["projects"][:10]:
        print(f"          {project['root']}")
    if len(snap["projects"]) > 10:
        print(f"          ... and {len(snap['projects']) - 10} more (lcm stats)")
    if "error" in outbox:
        print(f"outbox:   unreadable: {outbox['error']}")
    else:
        line = f"outbox:   {outbox['pending']} pending, {outbox['failing']} failing, {outbox['processed']} processed"
        if outbox.get("last_error"):
            line += f" (last error: {outbox['last_error']})"
        print(line)
    print(f"sync:     {snap['sync']['verdict']}: {snap['sync']['detail']}")
    integrity = snap["integrity"]
    if "error" in integrity:
        print(f"integrity: not checked: {integrity['error']}")
    elif integrity["ok"]:
        print(f"integrity: {integrity['checked']} database(s) pass quick_check")
    else:
        for store in integrity["damaged"]:
            print(f"integrity: {store['state'].upper()} {store['store']}: {store['detail']}"
                  " (lcm doctor says how to recover)")
    return 0


COMMAND = CommandSpec(
    name="status",
    help="show the daemon, storage backend, projects and hook outbox backlog",
    configure=configure,
    run=run,
)
