"""``lcm doctor`` and ``lcm status --json`` run ``quick_check`` on every store and name a damaged one."""

from __future__ import annotations

import json
from pathlib import Path

from lcm_framework.ingest.quarantine import QuarantineStore
from lcm_framework.outbox import Outbox, outbox_path
from tests.conftest import run_lcm
from tests.ingest.support import claude_records, write_jsonl


def _import_two_projects(tmp_path: Path) -> list[Path]:
    roots = []
    for name in ("alpha", "beta"):
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        write_jsonl(root / f"{name}.jsonl", claude_records(f"{name}-session", str(root), 3))
        result = run_lcm("import", str(root / f"{name}.jsonl"), cwd=root)
        assert result.returncode == 0, result.stderr
        roots.append(root)
    return roots


def test_healthy_stores_pass_and_a_damaged_project_is_named_with_the_way_back(lcm_env: Path,
                                                                            tmp_path: Path) -> None:
    alpha, _beta = _import_two_projects(tmp_path)
    with Outbox(outbox_path(lcm_env)):
        pass
    with QuarantineStore("p", "claude-code", lcm_env):
        pass
    status = json.loads(run_lcm("status", "--json", cwd=alpha).stdout)
    assert status["integrity"] == {"ok": True, "checked": 4, "damaged": []}
    healthy = run_lcm("doctor", cwd=alpha)
    assert "[ok  ] integrity: 4 database(s) pass quick_check" in healthy.stdout

    databases = sorted((lcm_env / "projects").glob("*/lcm.db"))
    assert len(databases) == 2
    damaged = databases[0]
    damaged.write_bytes(b"\0garbage, not an SQLite file" * 500)
    (lcm_env / "outbox.db").write_bytes(b"also garbage" * 500)

    doctor = run_lcm("doctor", "--json", cwd=alpha)
    assert doctor.returncode == 1
    failed = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "integrity"]
    assert {c["data"]["store"] for c in failed} == {"project", "outbox"}
    project = next(c for c in failed if c["data"]["store"] == "project")
    assert project["status"] == "fail" and str(damaged) in project["detail"]
    assert "lcm import" in project["fix"] and "aside" in project["fix"]
    assert project["data"]["project_id"] == damaged.parent.name
    text = run_lcm("doctor", cwd=alpha).stdout
    assert f"[FAIL] integrity: project: the file is damaged or not a database ({damaged})" in text

    status = json.loads(run_lcm("status", "--json", cwd=alpha).stdout)["integrity"]
    assert status["ok"] is False and status["checked"] == 4
    assert sorted(d["store"] for d in status["damaged"]) == ["outbox", "project"]
