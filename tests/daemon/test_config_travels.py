"""The configuration a command resolves reaches the processes it starts: ``lcm -c ... daemon start`` hands every
``-c`` value to the daemon it spawns (in the environment, never on its command line), and the daemon applies
them to each project it serves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from lcm_framework.config import load_config
from lcm_framework.config.resolve import PARENT_FLAGS
from lcm_framework.errors import ConfigError
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, OFFLINE_ENV, run_lcm
from tests.daemon.support import free_port
from tests.postgres.support import require_database


def test_a_child_resolves_the_flags_of_its_parent(tmp_path: Path) -> None:
    plugins = build_plugins()
    env = {"LCM_HOME": str(tmp_path / "home")}
    parent = load_config(project=tmp_path, env=env, plugins=plugins,
                         overrides={"memory.restore_count": "2", "compaction.truncate_tokens": "64"})
    child = load_config(project=tmp_path, env=parent.child_env(), plugins=plugins)
    assert child.flags == parent.flags == {"memory.restore_count": 2, "compaction.truncate_tokens": 64}
    assert child.source("memory.restore_count") == "flag"
    mine = load_config(project=tmp_path, env=parent.child_env(), plugins=plugins, overrides={"memory.restore_count": 3})
    assert mine.get("memory.restore_count") == 3  # the child's own flags still win
    plain = load_config(project=tmp_path, env=env, plugins=plugins)
    assert PARENT_FLAGS not in plain.child_env()


@pytest.mark.parametrize("text", ["[1]", "not json", '{"memory.restore_count": "many"}', '{"nope.key": 1}'])
def test_a_bad_handoff_is_a_config_error_that_never_shows_it(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(project=tmp_path, env={"LCM_HOME": str(tmp_path), PARENT_FLAGS: text}, plugins=build_plugins())
    assert PARENT_FLAGS in str(caught.value)


@pytest.mark.postgres
@pytest.mark.parametrize("foreground", [False, True], ids=["spawned", "foreground"])
def test_a_daemon_started_with_flags_stores_where_the_command_reads(tmp_path: Path, foreground: bool) -> None:
    """The issue's case: ``lcm -c postgresql.schema=X daemon start`` used to spawn a daemon that dropped every
    flag but the port, so the daemon stored hook events elsewhere (or failed with binding_mismatch); in the
    foreground, the projects it served dropped them too."""
    db = require_database()
    project = tmp_path / "project"
    project.mkdir()
    transcript = project / f"{CLAUDE_SAMPLE_ID}.jsonl"
    shutil.copyfile(CLAUDE_SAMPLE, transcript)
    port = free_port()
    with db.fresh_schema() as schema:
        flags = ["-c", "storage.backend=postgresql", "-c", f"postgresql.url={db.url}",
                 "-c", "postgresql.allow_plaintext_loopback=true", "-c", f"postgresql.schema={schema}",
                 "-c", f"daemon.port={port}"]
        env = {"LCM_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
        process = None
        if foreground:
            process = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", *flags, "daemon", "start",
                                        "--foreground"], cwd=project, env={**os.environ, **OFFLINE_ENV, **env},
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait_for_health(port, process)
        else:
            started = run_lcm(*flags, "daemon", "start", cwd=project, env=env)
            assert started.returncode == 0, started.stderr
        try:
            pid = json.loads(run_lcm(*flags, "daemon", "status", "--json", cwd=project, env=env).stdout)["pid"]
            if not foreground:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
                assert db.url not in cmdline and schema not in cmdline  # handed over in the environment
            token = (tmp_path / "home" / "daemon.token").read_text().strip()
            answer = httpx.post(f"http://127.0.0.1:{port}/ingest", headers={"Authorization": f"Bearer {token}"},
                                json={"project": str(project), "path": str(transcript), "compact": "none",
                                      "wait": True}, timeout=60)
            assert answer.status_code == 200, answer.text
            sessions = run_lcm(*flags, "sessions", "--json", cwd=project, env=env)
            assert sessions.returncode == 0, sessions.stderr
            assert CLAUDE_SAMPLE_ID in sessions.stdout
        finally:
            run_lcm(*flags, "daemon", "stop", cwd=project, env=env)
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert os.environ.get(PARENT_FLAGS) is None


def _wait_for_health(port: int, process: subprocess.Popen[bytes], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the daemon exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=0.5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError("the daemon did not answer in time")


@pytest.mark.postgres
def test_import_workers_store_where_the_command_reads(tmp_path: Path) -> None:
    """``lcm -c ... import --workers 2``: the worker process resolves the command's flags too."""
    db = require_database()
    project = tmp_path / "project"
    sessions_dir = tmp_path / "sessions"
    sessions_dir.mkdir(parents=True)
    project.mkdir()
    for sample in sorted(CLAUDE_SAMPLE.parent.glob("*.jsonl")):
        shutil.copyfile(sample, sessions_dir / sample.name)
    ids = sorted(p.stem for p in sessions_dir.glob("*.jsonl"))
    assert len(ids) >= 2
    with db.fresh_schema() as schema:
        flags = ["-c", "storage.backend=postgresql", "-c", f"postgresql.url={db.url}",
                 "-c", "postgresql.allow_plaintext_loopback=true", "-c", f"postgresql.schema={schema}"]
        env = {"LCM_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
        imported = run_lcm(*flags, "import", str(sessions_dir), "--workers", "2",
                           cwd=project, env=env)
        assert imported.returncode == 0, imported.stderr
        listed = run_lcm(*flags, "sessions", "--all-projects", "--json", cwd=project, env=env)
        assert listed.returncode == 0, listed.stderr
        assert all(session_id in listed.stdout for session_id in ids)
