"""Several real processes on one database: convergence, contiguous sequences, serialized lease holders."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.errors import ConflictError
from tests.conftest import REPO

from .support import TestDatabase
from .worker import REF

WORKERS = 4
pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def spawn(action: str, schema: str, tmp_path: Path, count: int, n: int = WORKERS) -> list[subprocess.Popen[str]]:
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return [subprocess.Popen([sys.executable, "-m", "tests.postgres.worker", action, schema,
                              str(tmp_path / f"home{i}"), str(go), str(count)],
                             cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(n)]


def results(procs: list[subprocess.Popen[str]], tmp_path: Path) -> list[Any]:
    (tmp_path / "go").touch()
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


@pytest.fixture
def migrated(make_factory: Callable[..., Any]) -> Any:
    """Migrate once up front so the workers race on data, not on DDL."""
    factory = make_factory()
    return factory


def test_concurrent_get_or_create_converges_on_one_conversation(migrated: Any, schema: str,
                                                                tmp_path: Path) -> None:
    found = results(spawn("get_or_create", schema, tmp_path, 5), tmp_path)
    ids = {cid for worker in found for cid in worker}
    assert len(ids) == 1
    project = migrated.open_project(REF)
    assert [c.conversation_id for c in project.conversations.find_conversations("shared-session")] == list(ids)


def test_concurrent_appends_never_gap_or_duplicate(migrated: Any, schema: str, tmp_path: Path) -> None:
    found = results(spawn("append", schema, tmp_path, 12), tmp_path)
    seqs = sorted(s for worker in found for s in worker)
    assert seqs == list(range(len(seqs))) and len(seqs) == WORKERS * (12 // 3) * 6
    project = migrated.open_project(REF)
    conv = project.conversations.find_conversations("append-session")
    assert len(conv) == 1
    stored = project.conversations.list_messages(conv[0].conversation_id)
    assert [m.seq for m in stored] == seqs


def test_concurrent_lease_holders_serialize(migrated: Any, schema: str, tmp_path: Path) -> None:
    found = results(spawn("lease", schema, tmp_path, 3), tmp_path)
    fences = sorted(f for worker in found for f in worker)
    assert fences == sorted(set(fences)) and len(fences) == WORKERS * 3  # every grant got a new fence
    project = migrated.open_project(REF)
    (conv,) = project.conversations.find_conversations("lease-log")
    log = [m.content for m in project.conversations.list_messages(conv.conversation_id)]
    assert len(log) == 2 * WORKERS * 3
    for enter, leave in zip(log[::2], log[1::2], strict=True):  # no interleaving of critical sections
        assert enter.startswith("enter ") and leave == "exit " + enter.removeprefix("enter ")


def test_a_crashed_holders_lease_expires_and_is_fenced_out(migrated: Any, db: TestDatabase, schema: str,
                                                           tmp_path: Path) -> None:
    (proc,) = spawn("hold_lease", schema, tmp_path, 2, n=1)
    (tmp_path / "go").touch()
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first == [1]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    project = migrated.open_project(REF)
    assert project.coordination.acquire_lease("crash:shared", "survivor", 30) is None  # still live
    deadline = time.monotonic() + 10
    taken = None
    while taken is None and time.monotonic() < deadline:
        time.sleep(0.2)
        taken = project.coordination.acquire_lease("crash:shared", "survivor", 30)
    assert taken is not None and taken.fence == 2
    from lcm_framework.storage.models import Lease

    stale = Lease("crash:shared", "doomed", 1, taken.expires_at)
    with pytest.raises(ConflictError):
        project.coordination.check_fence(stale)
    project.coordination.check_fence(taken)
