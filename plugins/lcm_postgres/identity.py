"""Machine and project identity for several machines sharing one database.

* The machine id is a UUIDv7 kept in ``$LCM_HOME/machine.json``
  (``lcm machine register``) and recorded in ``machines``.
* A project root may be bound to a remote project UUID
  (``lcm project create|link``); the binding lives both in
  ``$LCM_HOME/postgres-projects.json`` (root -> UUID) and in the database
  (``project_bindings``). A bound root stores its memory under the UUID, so
  the same project on several machines shares it, and different projects
  never mix. Opening a bound root checks both sides and fails closed on any
  mismatch. Roots without a binding keep the local path-derived id.
"""

from __future__ import annotations

import json
import secrets
import socket
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api import ConfigError, ConflictError, atomic_write_private

from .errors import BACKEND

MACHINE_FILE = "machine.json"
BINDINGS_FILE = "postgres-projects.json"


def uuid7() -> uuid.UUID:
    """A time-ordered UUID version 7 (RFC 9562)."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (ms & (2**48 - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62 | (rand & (2**62 - 1))
    return uuid.UUID(int=value)


def canonical_uuid(text: str, what: str) -> str:
    try:
        return str(uuid.UUID(text.strip()))
    except (ValueError, AttributeError):
        raise ConfigError(f"{what} must be a UUID") from None


@dataclass(frozen=True, slots=True)
class Machine:
    machine_id: str
    alias: str


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        raise ConfigError(f"{path.name} under LCM_HOME is unreadable or not JSON") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path.name} under LCM_HOME is not a JSON object")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write_private(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def local_machine(home: Path) -> Machine | None:
    data = _read_json(home / MACHINE_FILE)
    if not data:
        return None
    machine_id = canonical_uuid(str(data.get("machine_id", "")), "machine_id in machine.json")
    if uuid.UUID(machine_id).version != 7:
        raise ConfigError("machine_id in machine.json is not a UUIDv7")
    return Machine(machine_id, str(data.get("alias") or machine_id))


def create_local_machine(home: Path, alias: str | None) -> Machine:
    """The existing machine identity, or a new UUIDv7 one written under ``home``."""
    existing = local_machine(home)
    if existing is not None:
        return existing
    machine = Machine(str(uuid7()), alias or socket.gethostname())
    _write_json(home / MACHINE_FILE, {"machine_id": machine.machine_id, "alias": machine.alias})
    return machine


def local_bindings(home: Path) -> dict[str, str]:
    return {str(k): canonical_uuid(str(v), "a bound project id") for k, v in _read_json(home / BINDINGS_FILE).items()}


def save_binding(home: Path, root: str, project_uuid: str) -> None:
    bindings = local_bindings(home)
    bindings[root] = project_uuid
    _write_json(home / BINDINGS_FILE, bindings)


def mismatch(message: str, project: str | None = None) -> ConflictError:
    return ConflictError(message, backend=BACKEND, domain="identity", project=project, code="binding_mismatch")


def resolve_project_key(cur: Any, home: Path, root: str, default_id: str) -> str:
    """The storage key of ``root``: its bound UUID (checked against the database) or ``default_id``."""
    bound = local_bindings(home).get(root)
    if bound is None:
        return default_id
    machine = local_machine(home)
    if machine is None:
        raise mismatch("this project is bound to a remote project but no machine is registered", bound)
    cur.execute("SELECT project_uuid::text FROM project_bindings WHERE machine_id = %s AND root = %s",
                (machine.machine_id, root))
    row = cur.fetchone()
    if row is None or row[0] != bound:
        raise mismatch("the local project binding does not match the database (wrong database or relinked "
                       "project); run `lcm project show`", bound)
    return bound


def register_machine(cur: Any, machine: Machine) -> None:
    cur.execute("INSERT INTO machines (machine_id, alias) VALUES (%s, %s) ON CONFLICT (machine_id) DO NOTHING",
                (machine.machine_id, machine.alias))


def require_registered(cur: Any, machine: Machine | None) -> Machine:
    if machine is None:
        raise ConfigError("no machine identity yet: run `lcm machine register` first")
    cur.execute("SELECT 1 FROM machines WHERE machine_id = %s", (machine.machine_id,))
    if cur.fetchone() is None:
        raise ConfigError("this machine is not registered in the database: run `lcm machine register`")
    return machine


def create_project(cur: Any, machine: Machine, name: str) -> str:
    project_uuid = str(uuid7())
    cur.execute("INSERT INTO remote_projects (project_uuid, name, created_by) VALUES (%s, %s, %s)",
                (project_uuid, name, machine.machine_id))
    return project_uuid


def bind(cur: Any, machine: Machine, root: str, project_uuid: str) -> None:
    """Record root -> project for this machine; an existing different binding is refused."""
    cur.execute("SELECT 1 FROM remote_projects WHERE project_uuid = %s", (project_uuid,))
    if cur.fetchone() is None:
        raise mismatch("no remote project with this id exists in the database", project_uuid)
    cur.execute("INSERT INTO project_bindings (machine_id, root, project_uuid) VALUES (%s, %s, %s) "
                "ON CONFLICT (machine_id, root) DO NOTHING", (machine.machine_id, root, project_uuid))
    cur.execute("SELECT project_uuid::text FROM project_bindings WHERE machine_id = %s AND root = %s",
                (machine.machine_id, root))
    row = cur.fetchone()
    if row is None or row[0] != project_uuid:
        raise mismatch("this root is already bound to another remote project on this machine", project_uuid)


def describe(cur: Any, project_uuid: str) -> dict[str, Any]:
    cur.execute("SELECT name, created_at FROM remote_projects WHERE project_uuid = %s", (project_uuid,))
    row = cur.fetchone()
    if row is None:
        raise mismatch("the bound remote project does not exist in this database", project_uuid)
    cur.execute("SELECT m.alias, b.machine_id::text, b.root FROM project_bindings b JOIN machines m "
                "USING (machine_id) WHERE b.project_uuid = %s ORDER BY b.bound_at", (project_uuid,))
    bindings = [{"machine": alias, "machine_id": mid, "root": root} for alias, mid, root in cur.fetchall()]
    return {"project_uuid": project_uuid, "name": row[0], "created_at": row[1].isoformat(), "bindings": bindings}
