"""Machine and project identity: two machines share one remote project; a wrong binding fails closed."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from lcm_postgres.identity import BINDINGS_FILE, uuid7

from lcm_framework.errors import ConflictError
from lcm_framework.storage.models import ProjectRef
from tests.conftest import run_lcm

from .support import TestDatabase

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def machine(db: TestDatabase, schema: str, base: Path) -> tuple[Path, dict[str, str]]:
    """(project root, env) of one simulated machine: its own LCM_HOME and project directory."""
    root = base / "work" / "proj"
    (root / ".git").mkdir(parents=True)
    env = {"LCM_HOME": str(base / "lcm-home"), "LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_URL": db.url,
           "LCM_POSTGRES_ALLOW_PLAINTEXT": "true"}
    return root, env


def lcm_json(root: Path, env: dict[str, str], schema: str, *args: str) -> Any:
    done = run_lcm("-c", f"postgresql.schema={schema}", *args, "--json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_uuid7_layout() -> None:
    a, b = uuid7(), uuid7()
    assert a.version == 7 and a.variant == uuid.RFC_4122 and a != b
    assert a.int >> 80 <= b.int >> 80  # time-ordered milliseconds


def test_two_machines_share_one_project_and_mismatch_fails_closed(db: TestDatabase, schema: str,
                                                                   tmp_path: Path) -> None:
    root_a, env_a = machine(db, schema, tmp_path / "a")
    root_b, env_b = machine(db, schema, tmp_path / "b")
    first = lcm_json(root_a, env_a, schema, "machine", "register", "--alias", "laptop")
    assert uuid.UUID(first["machine_id"]).version == 7 and first["registered"]
    again = lcm_json(root_a, env_a, schema, "machine", "show")
    assert again["machine_id"] == first["machine_id"]
    created = lcm_json(root_a, env_a, schema, "project", "create", "--name", "demo")
    lcm_json(root_b, env_b, schema, "machine", "register", "--alias", "desktop")
    linked = lcm_json(root_b, env_b, schema, "project", "link", created["project_uuid"])
    assert linked["project_uuid"] == created["project_uuid"]
    assert sorted(b["machine"] for b in linked["bindings"]) == ["desktop", "laptop"]

    fa = db.factory(schema, tmp_path / "a")
    fb = db.factory(schema, tmp_path / "b")
    try:
        pa = fa.open_project(ProjectRef("x" * 64, str(root_a.resolve())))
        pb = fb.open_project(ProjectRef("y" * 64, str(root_b.resolve())))
        assert pa.project_id == pb.project_id == created["project_uuid"]
        conv = pa.conversations.create_conversation("shared")
        assert pb.conversations.get_conversation(conv.conversation_id) == conv
        unbound = fb.open_project(ProjectRef("z" * 64, "/elsewhere"))
        assert unbound.conversations.list_conversations() == []

        bindings = tmp_path / "a" / "lcm-home" / BINDINGS_FILE
        data = json.loads(bindings.read_text())
        data[str(root_a.resolve())] = str(uuid7())
        bindings.write_text(json.dumps(data))
        with pytest.raises(ConflictError) as info:
            fa.open_project(ProjectRef("x" * 64, str(root_a.resolve())))
        assert info.value.code == "binding_mismatch"
    finally:
        fa.close()
        fb.close()


def test_linking_an_unknown_project_or_without_a_machine_is_refused(db: TestDatabase, schema: str,
                                                                    tmp_path: Path) -> None:
    root, env = machine(db, schema, tmp_path / "m")
    no_machine = run_lcm("-c", f"postgresql.schema={schema}", "project", "create", cwd=root, env=env)
    assert no_machine.returncode != 0 and "machine register" in no_machine.stderr
    lcm_json(root, env, schema, "machine", "register")
    unknown = run_lcm("-c", f"postgresql.schema={schema}", "project", "link", str(uuid7()), cwd=root, env=env)
    assert unknown.returncode != 0 and "no remote project" in unknown.stderr
    assert not (tmp_path / "m" / "lcm-home" / BINDINGS_FILE).exists()
    not_bound = run_lcm("-c", f"postgresql.schema={schema}", "project", "show", cwd=root, env=env)
    assert not_bound.returncode != 0 and "not bound" in not_bound.stderr
