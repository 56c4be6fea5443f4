"""``lcm doctor [--json]``: check the whole installation; each failure names the command that fixes it."""

from __future__ import annotations

import argparse
import os

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import add_json
from .output import print_json

MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import DoctorRequest, doctor

    diagnosis = doctor(app, DoctorRequest(dict(os.environ)))
    checks = diagnosis.checks
    failed = [c for c in checks if c.failed]
    if args.json:
        print_json(diagnosis.to_json())
    else:
        for check in checks:
            print(f"[{MARKS.get(check.status, check.status)}] {check.name}: {check.detail}")
            if check.fix and check.status in ("fail", "warn"):
                print(f"       fix: {check.fix}")
        print("all checks passed" if not failed else f"{len(failed)} check(s) failed")
    return 1 if failed else 0


COMMAND = CommandSpec(
    name="doctor",
    help="check configuration, plugins, storage, summarizer, agent hooks, daemon and outbox",
    description=(
        "Runs every check and prints ok/warn/FAIL/skip with the command that fixes each problem.\n"
        "Exit status 1 when any check fails. Credentials are checked for presence only, never printed."
    ),
    configure=configure,
    run=run,
)
