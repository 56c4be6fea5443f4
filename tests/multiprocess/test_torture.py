"""The torture run of the normal suite: a daemon, hooks, writers, imports, compactions, CLI readers and MCP
sessions on one project at once, some SIGKILLed; nothing committed is lost, nothing is damaged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.postgres.support import TestDatabase, require_database

from .torture import Plan, Run, run_torture

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/<pid>/fd")]


def _report(run: Run) -> None:
    print(f"torture run: {run.summary()}")


def test_sqlite_project_shared_by_many_processes_loses_nothing(lcm_env: Path, tmp_path: Path) -> None:
    plan = Plan()
    problems = run_torture(tmp_path / "run", plan, _report)
    assert problems == [], f"seed {plan.seed}: {problems}"


@pytest.mark.postgres
def test_postgres_project_shared_by_many_processes_loses_nothing(lcm_env: Path, tmp_path: Path) -> None:
    db: TestDatabase = require_database()
    with db.fresh_schema() as schema:
        plan = Plan(duration_s=15.0, postgres={"url": db.url, "schema": schema})
        problems = run_torture(tmp_path / "run", plan, _report)
    assert problems == [], f"seed {plan.seed}: {problems}"
