"""``lcm postgres migrate|grants|verify``, ``lcm machine register|show``, ``lcm project create|link|show``.

Cheap to import: psycopg and the backend modules load inside the handlers.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import CommandSpec, ConfigError
from lcm_framework.plugin_api.output import add_json, print_json

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Host, Plugins


@contextmanager
def _direct(app: Host, domain: str) -> Iterator[tuple[Any, Any]]:
    """(settings, autocommit connection) without building the factory (used by migrate/verify)."""
    from .runtime import Runtime
    from .settings import load_settings

    settings = load_settings(app.config)
    runtime = Runtime(settings)
    try:
        with runtime.connection(domain) as conn:
            yield settings, conn
    finally:
        runtime.close()


@contextmanager
def _backend_cursor(app: Host, domain: str) -> Iterator[Any]:
    """A cursor in one transaction on the configured PostgreSQL backend, verified as opening it verifies (its
    own factory, closed afterwards). Identity rows are no storage contract: nothing here goes around the core's
    checks of repository calls."""
    from .factory import PostgresBackendFactory

    if app.config.get("storage.backend") != "postgresql":
        raise ConfigError("this command needs storage.backend = postgresql (LCM_STORAGE_BACKEND=postgresql)")
    factory = PostgresBackendFactory(app.config)
    try:
        with factory.runtime.connection(domain) as conn, conn.transaction(), conn.cursor() as cur:
            yield cur
    finally:
        factory.close()


# --- lcm postgres ------------------------------------------------------------

def configure_postgres(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    mig = sub.add_parser("migrate", help="apply pending schema migrations (run as the schema owner)")
    add_json(mig)
    gr = sub.add_parser("grants", help="print the reviewed SQL granting a restricted runtime role its privileges")
    gr.add_argument("--role", required=True, help="the existing runtime role to grant to")
    ver = sub.add_parser("verify", help="check ledger, schema fingerprint and privileges without changing anything")
    add_json(ver)


def run_postgres(args: argparse.Namespace, app: Host) -> int:
    from . import grants

    if args.action == "grants":
        print(grants.render(args.role, str(app.config.get("postgresql.schema"))), end="")
        return 0
    from . import migrate
    from .factory import verify_ready

    with _direct(app, "migrations") as (settings, conn):
        if args.action == "migrate":
            report = migrate.run(conn, settings.schema)
            if args.json:
                print_json(report)
            elif report.applied:
                print(f"applied {', '.join(report.applied)} to schema {report.schema}")
            else:
                print(f"schema {report.schema} is up to date ({report.current})")
            return 0
        with conn.transaction(), conn.cursor() as cur:
            owner = grants.owns_or_absent(cur, settings.schema)
            current = verify_ready(cur, settings.schema, owner=owner)
    result = {"schema": settings.schema, "migration": current, "role": "owner" if owner else "runtime",
              "ok": True}
    if args.json:
        print_json(result)
    else:
        print(f"schema {settings.schema} verified at {current} (connected as {result['role']} role)")
    return 0


# --- lcm machine ---------------------------------------------------------------

def configure_machine(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    reg = sub.add_parser("register", help="create this machine's UUIDv7 id (once) and record it in the database")
    reg.add_argument("--alias", help="a readable name (default: the host name)")
    add_json(reg)
    show = sub.add_parser("show", help="print this machine's id and whether the database knows it")
    add_json(show)


def run_machine(args: argparse.Namespace, app: Host) -> int:
    from . import identity

    home = app.config.home
    if args.action == "register":
        machine = identity.create_local_machine(home, args.alias)
        with _backend_cursor(app, "identity") as cur:
            identity.register_machine(cur, machine)
        registered = True
    else:
        found = identity.local_machine(home)
        if found is None:
            raise ConfigError("no machine identity yet: run `lcm machine register`")
        machine = found
        with _backend_cursor(app, "identity") as cur:
            cur.execute("SELECT 1 FROM machines WHERE machine_id = %s", (machine.machine_id,))
            registered = cur.fetchone() is not None
    if args.json:
        print_json({"machine_id": machine.machine_id, "alias": machine.alias, "registered": registered})
    else:
        print(f"machine {machine.machine_id} ({machine.alias}){'' if registered else ' - not registered'}")
    return 0


# --- lcm project ---------------------------------------------------------------

def configure_project(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    cr = sub.add_parser("create", help="create a remote project and bind the current project root to it")
    cr.add_argument("--name", help="project name (default: the root directory's name)")
    add_json(cr)
    ln = sub.add_parser("link", help="bind the current project root to an existing remote project")
    ln.add_argument("project_uuid", help="the remote project id printed by `lcm project create|show`")
    add_json(ln)
    show = sub.add_parser("show", help="print the current root's binding and every machine bound to it")
    add_json(show)


def run_project(args: argparse.Namespace, app: Host) -> int:
    from pathlib import Path

    from . import identity

    home = app.config.home
    root = app.project_ref().root
    with _backend_cursor(app, "identity") as cur:
        if args.action in {"create", "link"}:
            if root in identity.local_bindings(home):
                raise ConfigError("this project root is already bound; `lcm project show` prints the binding")
            machine = identity.require_registered(cur, identity.local_machine(home))
            if args.action == "create":
                project_uuid = identity.create_project(cur, machine, args.name or Path(root).name)
            else:
                project_uuid = identity.canonical_uuid(args.project_uuid, "the project id")
            identity.bind(cur, machine, root, project_uuid)
        else:
            bound = identity.local_bindings(home).get(root)
            if bound is None:
                raise ConfigError("this project root is not bound to a remote project (`lcm project create`)")
            project_uuid = bound
        info = identity.describe(cur, project_uuid)
    if args.action in {"create", "link"}:
        identity.save_binding(home, root, project_uuid)
    info["root"] = root
    if args.json:
        print_json(info)
    else:
        print(f"project {info['project_uuid']} ({info['name']}) bound at {root}")
        for b in info["bindings"]:
            print(f"  {b['machine']}  {b['machine_id']}  {b['root']}")
    return 0


COMMANDS = (
    CommandSpec(name="postgres", help="PostgreSQL schema migrations, runtime grants and verification",
                description="Manage the PostgreSQL backend: `migrate` applies the shipped, checksummed "
                            "migrations; `grants --role NAME` prints the reviewed runtime-role SQL; `verify` "
                            "checks ledger, schema fingerprint and privileges.",
                configure=configure_postgres, run=run_postgres),
    CommandSpec(name="machine", help="this machine's identity in a shared PostgreSQL database",
                configure=configure_machine, run=run_machine),
    CommandSpec(name="project", help="bind this project root to a shared remote project (PostgreSQL)",
                description="Several machines share one PostgreSQL database without mixing projects: "
                            "`create` makes a remote project and binds this root; on another machine `link "
                            "UUID` binds its root to the same project. Opening a bound project checks the "
                            "binding and fails closed on mismatch.",
                configure=configure_project, run=run_project),
)
