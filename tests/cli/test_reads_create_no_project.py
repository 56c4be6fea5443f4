"""Commands that only read never create a project: no directory or database (SQLite), no project row
(PostgreSQL). Only writes (import, memory add, a compaction that writes) do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_framework.paths import project_id_for
from tests.conftest import CLAUDE_SAMPLE, run_lcm

READS = [
    ("search", "port"),
    ("grep", "port", "--session", "7c1f"),
    ("memory", "list"),
    ("memory", "show", "mem_1"),
    ("memory", "list", "--global"),
    ("compact", "--all"),
    ("promote",),
    ("verify",),
    ("context", "7c1f"),
    ("doctor",),
    ("status",),
    ("stats",),
    ("stats", "--storage", "--current"),
    ("describe", "msg_1"),
    ("expand", "msg_1"),
    ("sessions",),
    ("sensitive", "audit"),
    ("memory", "search", "port"),
    ("memory", "stats"),
    ("memory", "review"),
    ("vacuum",),
    ("export", "-o", "-"),
    ("tool", "lcm_grep", "port"),
]


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment selecting the backend; another project already holds the sample session."""
    env = {"LCM_HOME": str(tmp_path / "lcm-home")}
    if request.param == "sqlite":
        yield env
        return
    from tests.postgres.support import require_database

    db = require_database()
    with db.fresh_schema() as schema:
        yield {**env, "LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_URL": db.url,
               "LCM_POSTGRES_ALLOW_PLAINTEXT": "true", "_schema": schema, "_url": db.url}


def lcm(env: dict[str, str], *args: str, cwd: Path) -> object:
    schema = ("-c", f"postgresql.schema={env['_schema']}") if "_schema" in env else ()
    return run_lcm(*schema, *args, cwd=cwd, env={k: v for k, v in env.items() if not k.startswith("_")})


def stored_projects(env: dict[str, str]) -> set[str]:
    """Project ids the backend holds: its directories (SQLite) or its ``projects`` rows (PostgreSQL)."""
    if "_schema" not in env:
        return {p.name for p in (Path(env["LCM_HOME"]) / "projects").iterdir()}
    import psycopg

    with psycopg.connect(env["_url"], autocommit=True) as conn:
        return {r[0] for r in conn.execute(f'SELECT project_id FROM "{env["_schema"]}".projects')}


def test_reads_in_a_fresh_directory_create_no_project(backend: dict[str, str], tmp_path: Path) -> None:
    holder, fresh = tmp_path / "holder", tmp_path / "fresh"
    for directory in (holder, fresh):
        (directory / ".git").mkdir(parents=True)
    imported = lcm(backend, "import", str(CLAUDE_SAMPLE), "--project", str(holder), cwd=holder)
    assert imported.returncode == 0, imported.stderr  # type: ignore[attr-defined]
    before = stored_projects(backend)
    assert before == {project_id_for(holder)}
    for command in READS:
        done = lcm(backend, *command, cwd=fresh)
        assert "Traceback" not in done.stderr, (command, done.stderr)  # type: ignore[attr-defined]
        assert stored_projects(backend) == before, command
    rows = json.loads(lcm(backend, "stats", "--json", cwd=fresh).stdout)["projects"]  # type: ignore[attr-defined]
    assert [r["root"] for r in rows] == [str(holder.resolve())] and rows[0]["messages"] > 0


def test_writes_still_create_their_project(tmp_path: Path) -> None:
    home = tmp_path / "lcm-home"
    fresh = tmp_path / "fresh"
    (fresh / ".git").mkdir(parents=True)
    added = run_lcm("memory", "add", "use uv for installs", cwd=fresh, env={"LCM_HOME": str(home)})
    assert added.returncode == 0, added.stderr
    assert (home / "projects" / project_id_for(fresh) / "lcm.db").is_file()
    listed = json.loads(run_lcm("memory", "list", "--json", cwd=fresh, env={"LCM_HOME": str(home)}).stdout)
    assert [m["content"] for m in listed["memories"]] == ["use uv for installs"]
