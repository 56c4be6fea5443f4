"""``lcm sync status | drain [--once] | replay ID | quarantine list | prune``: team sync through the inbox."""

from __future__ import annotations

import argparse
from typing import Any

from ..app import App
from ..errors import UnsupportedCapabilityError
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import print_json

DESCRIPTION = """\
With storage.backend = postgresql, every machine's hook events go from its local outbox to the shared
inbox, where one machine's drain worker applies each exactly once, in each machine's order (the daemon
runs the drain in the background). With SQLite nothing leaves the machine."""


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    status = sub.add_parser("status", help="backlog per state and per machine, oldest waiting age, last error")
    add_json(status)
    drain = sub.add_parser("drain", help="deliver, apply, acknowledge and prune now, until nothing is left")
    drain.add_argument("--once", action="store_true", help="one bounded pass only")
    add_json(drain)
    replay = sub.add_parser("replay", help="give a quarantined event another try: in the inbox exactly as "
                            "delivered, or (never delivered) at the end of this machine's sequence")
    replay.add_argument("event_uuid", metavar="ID", help="the event's uuid (lcm sync quarantine list)")
    add_json(replay)
    quarantine = sub.add_parser("quarantine", help="events that could not be applied, with the reason")
    qsub = quarantine.add_subparsers(dest="quarantine_action", metavar="ACTION", required=True)
    qlist = qsub.add_parser("list", help="list quarantined events (this machine's and the inbox's)")
    add_json(qlist)
    prune = sub.add_parser("prune", help="drop inbox rows proved applied, then local rows whose delivery is over")
    add_json(prune)


def run(args: argparse.Namespace, app: App) -> int:
    from ..config import parse_overrides
    from ..sync import status as sync_status

    with sync_status.project_access(app, parse_overrides(args.overrides)) as (projects, roots):
        if args.action == "status":
            snap = sync_status.sync_status(app, projects, roots)
            _print(args, snap, _status_lines(snap))
            return 0
        if projects is None:
            raise UnsupportedCapabilityError(
                "team sync needs storage.backend = postgresql; with SQLite events stay on this machine",
                backend=str(app.config.get("storage.backend")), domain="passive_inbox", code="no_passive_inbox")
        if args.action == "quarantine":
            local = sync_status.local_backlog(app.config.home)["quarantined"]
            remote = [{"root": root, "event_uuid": r.event_uuid, "machine_id": r.machine_id, "seq": r.seq,
                       "event": r.event, "attempts": r.attempts, "reason": r.last_error,
                       "quarantined_at": r.quarantined_at} for root in roots
                      if (storage := projects.existing(root)) is not None
                      for r in storage.passive_inbox.quarantined()]
            result: dict[str, Any] = {"local": [q for q in local if q["where"] == "local"], "inbox": remote}
            lines = [f"inbox  {q['event_uuid']}  machine {q['machine_id']} #{q['seq']} {q['event']}: {q['reason']}"
                     for q in remote]
            lines += [f"local  {q['event_uuid']}  #{q['seq']} {q['event']}: {q['reason']} (never delivered)"
                      for q in result["local"]]
            _print(args, result, lines or ["no quarantined events"])
            return 0
        if args.action == "replay":
            return _replay(args, app, projects, roots)
        worker = _worker(app, projects)
        if args.action == "prune":
            report = worker.settle()
            removed = _retire(app)
            result = {"acknowledged": report.acknowledged, "inbox_rows_pruned": report.pruned,
                      "local_rows_removed": removed, "errors": report.errors}
            _print(args, result, [f"acknowledged {report.acknowledged}, pruned {report.pruned} inbox row(s), "
                                  f"removed {removed} local row(s)", *report.errors])
            return 0
        report = worker.run_once() if args.once else worker.drain()
        lines = [f"delivered {report.delivered}, applied {report.applied}, retried {report.retried}, "
                 f"quarantined {report.quarantined}, acknowledged {report.acknowledged}, pruned {report.pruned}"]
        if not report.lease:
            lines.append("another drain worker of this machine holds the lease (the daemon?): it continues")
        _print(args, report, lines + report.errors)
        return 0


def _worker(app: App, projects: Any) -> Any:
    from ..sync.worker import DrainSettings, DrainWorker

    return DrainWorker(app.config.home, projects, DrainSettings.from_config(app.config), env=app.config.env)


def _replay(args: argparse.Namespace, app: App, projects: Any, roots: list[str]) -> int:
    from ..storage.call_rules import event_uuid as check_uuid
    from ..storage.validation import Validator
    from ..sync.replay import replay

    wanted = args.event_uuid.strip().lower()
    check_uuid(Validator(str(app.config.get("storage.backend")), "passive_inbox"), wanted)
    done = replay(app.config.home, projects, roots, wanted)
    line = (f"event {done.event_uuid} is pending again in {done.root}'s inbox (exactly as delivered)"
            if done.where == "inbox" else
            f"event {done.event_uuid} is pending delivery again, as this machine's sequence {done.seq}")
    _print(args, {"event_uuid": done.event_uuid, "where": done.where, "state": done.state, "root": done.root,
                  "seq": done.seq}, [line])
    return 0


def _retire(app: App) -> int:
    from ..outbox import Outbox, outbox_path

    path = outbox_path(app.config.home)
    if not path.exists():
        return 0
    with Outbox(path) as box:
        return box.prune_processed(older_than_s=0)


def _status_lines(snap: dict[str, Any]) -> list[str]:
    local = snap["local"]
    lines = [f"sync:     {snap['verdict']}: {snap['detail']}"]
    states = ", ".join(f"{n} {s}" for s, n in sorted(local["by_state"].items())) or "empty"
    lines.append(f"outbox:   {states}" + (f" (last error: {local['last_error']})" if local["last_error"] else ""))
    for project in snap["projects"]:
        if "error" in project:
            lines.append(f"inbox:    {project['root']}: unavailable: {project['error']}")
            continue
        states = ", ".join(f"{n} {s}" for s, n in sorted(project["by_state"].items())) or "empty"
        age = project["oldest_open_age_s"]
        lines.append(f"inbox:    {project['root']}: {states}; {project['applied_total']} applied in all"
                     + (f"; oldest open {age:.0f} s" if age is not None else ""))
        for machine, states_of in sorted(project["by_machine"].items()):
            lines.append(f"          machine {machine}: " + ", ".join(f"{n} {s}" for s, n in sorted(states_of.items())))
        if project["last_error"]:
            lines.append(f"          last error: {project['last_error']}")
    return lines


def _print(args: argparse.Namespace, value: Any, lines: list[str]) -> None:
    if getattr(args, "json", False):
        print_json(value)
        return
    for line in lines:
        print(line)


COMMAND = CommandSpec(
    name="sync",
    help="team sync through the PostgreSQL inbox: status, drain, replay, quarantine, prune",
    description=DESCRIPTION,
    configure=configure,
    run=run,
)
