"""Portable records as users move them: SQLite -> export -> PostgreSQL -> export -> SQLite, real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.compaction.helpers import project_dir
from tests.conftest import OFFLINE_ENV, run_lcm

SAMPLES = Path(__file__).resolve().parents[2] / "formats" / "samples" / "claude" / "projects" / "-home-dev-orders-api"


SMALL = ("-c", "compaction.leaf_chunk_tokens=1000", "-c", "compaction.leaf_target_tokens=100",
         "-c", "compaction.leaf_min_fanout=3", "-c", "compaction.condensed_target_tokens=100")


CURSORS = "Orders API paginates with opaque cursors"


def lcm(root: Path, env: dict[str, str], *args: str) -> str:
    done = run_lcm("--project", str(root), *args, cwd=root, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def digests(path: Path) -> list[str]:
    lines = path.read_text("utf-8").splitlines()
    assert json.loads(lines[0])["format"] == "lcm-records"
    return [json.loads(line)["digest"] for line in lines[1:]]


def kinds(path: Path) -> list[str]:
    return [json.loads(line)["type"] for line in path.read_text("utf-8").splitlines()[1:]]


def sqlite_env(home: Path) -> dict[str, str]:
    return {"LCM_HOME": str(home), "LCM_STORAGE_BACKEND": "sqlite"}


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A SQLite project with imported, compacted sessions and memories with feedback and surfacings."""
    root = project_dir(tmp_path)
    env = sqlite_env(tmp_path / "home-a")
    for session in sorted(SAMPLES.glob("*.jsonl")):
        lcm(root, env, "import", str(session), "--project", str(root))
    lcm(root, env, *SMALL, "compact", "--all")
    cursors = json.loads(lcm(root, env, "memory", "add", CURSORS, "--tag", "api", "--json"))["id"]
    suite = json.loads(lcm(root, env, "memory", "add", "Run the test suite with -n 2", "--tag", "tests",
                           "--confidence", "0.8", "--json"))["id"]
    lcm(root, env, "memory", "add", "--global", "Answer in British English")
    lcm(root, env, "memory", "feedback", cursors, "--useful")
    lcm(root, env, "memory", "archive", suite)
    return root, env


def test_sqlite_postgres_sqlite_round_trip_is_identical_by_digest(seeded: tuple[Path, dict[str, str]],
                                                                   tmp_path: Path) -> None:
    from tests.postgres.support import require_database

    root, env_a = seeded
    first = tmp_path / "a.jsonl"
    lcm(root, env_a, "export", "--all-projects", "-o", str(first))
    assert {"project", "conversation", "memory"} <= set(kinds(first))
    conversation = next(json.loads(line) for line in first.read_text().splitlines()[1:]
                        if json.loads(line)["type"] == "conversation" and json.loads(line)["summaries"])
    assert conversation["context"] and conversation["native"]
    db = require_database()
    with db.fresh_schema() as schema:
        env_pg = {"LCM_HOME": str(tmp_path / "home-pg"), "LCM_STORAGE_BACKEND": "postgresql",
                  "LCM_POSTGRES_URL": db.url, "LCM_POSTGRES_ALLOW_PLAINTEXT": "true"}
        pg = ("-c", f"postgresql.schema={schema}")
        report = json.loads(lcm(root, env_pg, *pg, "import-records", str(first), "--json"))
        assert report["applied"] == {"memory": kinds(first).count("memory"),
                                     "conversation": kinds(first).count("conversation")}
        assert kinds(first).count("memory") > 3  # promoted memories (with lineage) besides the three added
        again = json.loads(lcm(root, env_pg, *pg, "import-records", str(first), "--json"))
        assert again["applied"] == {} and again["skipped"] == report["applied"]
        second = tmp_path / "b.jsonl"
        lcm(root, env_pg, *pg, "export", "--all-projects", "-o", str(second))
    env_b = sqlite_env(tmp_path / "home-b")
    lcm(root, env_b, "import-records", str(second))
    third = tmp_path / "c.jsonl"
    lcm(root, env_b, "export", "--all-projects", "-o", str(third))
    assert sorted(digests(first)) == sorted(digests(second)) == sorted(digests(third))
    (shown,) = [m for m in json.loads(lcm(root, env_b, "memory", "list", "--json"))["memories"]
                if m["content"] == CURSORS]
    assert shown["tags"] == ["api"]
    assert json.loads(lcm(root, env_b, "memory", "show", shown["id"], "--json"))["recall"]["useful"] == 1
    promoted = [m for m in json.loads(lcm(root, env_b, "memory", "list", "--json"))["memories"]
                if m["lineage"]["origin"] == "promotion"]
    assert promoted and all(m["lineage"]["messages"] for m in promoted)  # lineage mapped to local message ids
    assert json.loads(lcm(root, env_b, "memory", "list", "--global", "--json"))["memories"][0]["content"] == \
        "Answer in British English"
    word = max(conversation["messages"][0]["content"].split(), key=len)
    grep = json.loads(lcm(root, env_b, "grep", word, "--scope", "messages", "--mode", "substring", "--json"))
    assert grep["groups"]  # the conversations are searchable after the move


def test_memories_only_and_a_newer_version_is_refused(seeded: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, env = seeded
    out = tmp_path / "m.jsonl"
    lcm(root, env, "export", "--memories-only", "-o", str(out))
    assert set(kinds(out)) == {"project", "memory"}
    elsewhere = project_dir(tmp_path, "elsewhere")
    lcm(elsewhere, sqlite_env(tmp_path / "home-c"), "import-records", str(out), "--here")
    moved = json.loads(lcm(elsewhere, sqlite_env(tmp_path / "home-c"), "memory", "list", "--json"))["memories"]
    assert CURSORS in {m["content"] for m in moved}  # into the current project, not the root the file names
    lines = out.read_text().splitlines()
    newer = tmp_path / "newer.jsonl"
    newer.write_text("\n".join([json.dumps({**json.loads(lines[0]), "version": 99}), *lines[1:]]) + "\n")
    done = run_lcm("--project", str(root), "import-records", str(newer), cwd=root, env=sqlite_env(tmp_path / "h"))
    assert done.returncode == 2 and "version 99" in done.stderr and "upgrade" in done.stderr
    damaged = tmp_path / "damaged.jsonl"
    tampered = {**json.loads(lines[2]), "content": "tampered"}  # the digest no longer matches
    damaged.write_text("\n".join([lines[0], lines[1], json.dumps(tampered)]) + "\n")
    done = run_lcm("--project", str(root), "import-records", str(damaged), cwd=root, env=sqlite_env(tmp_path / "h"))
    assert done.returncode == 2 and "digest" in done.stderr


def test_a_killed_import_resumes_after_its_last_applied_record(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    env_a = sqlite_env(tmp_path / "home-a")
    big = tmp_path / "big.jsonl"
    header = {"format": "lcm-records", "version": 1, "backend": "sqlite", "created_at": "2026-01-01T00:00:00+00:00"}
    from lcm_framework.portable.records import with_digest

    lines = [json.dumps(header), json.dumps(with_digest({"type": "project", "user_wide": False, "root": str(root)}))]
    total = 1500
    for n in range(total):
        lines.append(json.dumps(with_digest({
            "type": "memory", "content": f"Insight number {n}: component c{n} owns table t{n}", "tags": [f"t{n}"],
            "confidence": 0.5, "archived": False, "created_at": "2026-01-01T00:00:00+00:00",
            "updated_at": "2026-01-01T00:00:00+00:00", "source_summary_id": None,
            "lineage": {"origin": "import", "kind": None, "summaries": [], "messages": [], "extra": {}},
            "recall": {"surfaced": 0, "useful": 0, "not_useful": 0, "last_surfaced_at": None, "surfacings": []}})))
    big.write_text("\n".join(lines) + "\n")
    env = {**os.environ, **OFFLINE_ENV, **env_a}
    proc = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", "--project", str(root),
                             "import-records", str(big)], cwd=root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    checkpoints = tmp_path / "home-a" / "imports"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        found = list(checkpoints.glob("*.json")) if checkpoints.exists() else []
        if found and json.loads(found[0].read_text() or "{}").get("line", 0) > 50:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the import finished before it could be killed: make the file larger"
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.stderr is not None
    proc.stderr.close()
    report = json.loads(lcm(root, env_a, "import-records", str(big), "--json"))
    assert report["resumed_after_line"] > 50
    stored = json.loads(lcm(root, env_a, "memory", "list", "--json"))["memories"]
    assert len(stored) == total and len({m["content"] for m in stored}) == total
    assert not list(checkpoints.glob("*.json"))  # done: the checkpoint is gone
