"""Crash recovery and concurrency with real processes: kill -9 at several points, two importers at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lcm_framework.app import App
from lcm_framework.ingest import import_sources
from lcm_framework.storage.contracts import ProjectStorage
from tests.conftest import OFFLINE_ENV

from .support import claude_records, codex_records, make_app, snapshot, write_jsonl

BATCH = "4"


def _corpus(tmp_path: Path, proj: Path) -> tuple[Path, list[str]]:
    src = tmp_path / "src"
    sessions = []
    for i in range(2):
        write_jsonl(src / f"c{i}.jsonl", claude_records(f"kill-{i}", str(proj), 40))
        sessions.append(f"kill-{i}")
    write_jsonl(src / "rollout-k.jsonl", codex_records("kill-codex", str(proj), 20))
    with (src / "c0.jsonl").open("ab") as fh:  # a quarantined line in the middle of the run
        fh.write(b"{broken\n")
    write_jsonl(src / "c0.jsonl", claude_records("kill-0", str(proj), 5, start=40), mode="a")
    return src, [*sessions, "kill-codex"]


def _spawn(src: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "lcm_framework.cli.main", "import", str(src), "--batch-size", BATCH, "--json"],
        env={**os.environ, **OFFLINE_ENV}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def _reference(tmp_path: Path, proj: Path, src: Path, sessions: list[str]) -> dict[str, object]:
    app = make_app(proj, home=tmp_path / "reference-home")
    try:
        assert import_sources(app, [src], batch_size=int(BATCH)).errors == []
        return snapshot(app, proj, sessions)
    finally:
        app.close()


def _wait_then_kill(proc: subprocess.Popen[bytes], watcher: App, proj: Path, threshold: int) -> None:
    """SIGKILL ``proc`` once its checkpoints cover ``threshold`` bytes (or when it ends by itself)."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and not watcher.storage.list_projects():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with watcher.project(proj) as st:
        while proc.poll() is None and _committed_bytes(st) < threshold:
            assert time.monotonic() < deadline
            time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _committed_bytes(st: ProjectStorage) -> int:
    cps = (st.native_transcripts.get_checkpoint(f"{client}:{loc}")
           for client, loc in (("claude-code", "c0.jsonl"), ("claude-code", "c1.jsonl"), ("codex", "rollout-k.jsonl")))
    return sum(cp.byte_offset for cp in cps if cp is not None)


def test_kill_9_at_several_points_then_rerun_equals_an_uninterrupted_import(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src, sessions = _corpus(tmp_path, proj)
    reference = _reference(tmp_path, proj, src, sessions)
    total = sum(p.stat().st_size for p in src.iterdir())
    watcher = make_app(proj)
    killed_at = []
    try:
        for share in (0.2, 0.5, 0.85):
            _wait_then_kill(_spawn(src), watcher, proj, int(share * total))
            with watcher.project(proj) as st:
                killed_at.append(_committed_bytes(st))
    finally:
        watcher.close()
    assert any(0 < n < total for n in killed_at), killed_at  # the kills landed mid-import
    assert killed_at == sorted(killed_at)  # every run resumed where the previous one stopped
    result = subprocess.run(
        [sys.executable, "-m", "lcm_framework.cli.main", "import", str(src), "--batch-size", BATCH],
        env={**os.environ, **OFFLINE_ENV}, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    app = make_app(proj)
    try:
        assert snapshot(app, proj, sessions) == reference
    finally:
        app.close()


def test_two_concurrent_imports_converge_without_duplicates(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src, sessions = _corpus(tmp_path, proj)
    reference = _reference(tmp_path, proj, src, sessions)
    procs = [_spawn(src) for _ in range(2)]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    app = make_app(proj)
    try:
        got = snapshot(app, proj, sessions)
    finally:
        app.close()
    assert got["conversations"] == reference["conversations"]
    assert got["native"] == reference["native"]
    assert got["redactions"] == reference["redactions"] and got["quarantine"] == reference["quarantine"]
    for key, cp in got["checkpoints"].items():  # type: ignore[attr-defined]
        ref = reference["checkpoints"][key]  # type: ignore[index]
        assert (cp.byte_offset, cp.prefix_sha256, cp.last_source_ordinal, cp.quarantined) == (
            ref.byte_offset, ref.prefix_sha256, ref.last_source_ordinal, ref.quarantined)
        assert cp.imported + cp.skipped >= ref.imported


def test_threads_of_one_process_ingesting_the_same_file_converge(tmp_path: Path) -> None:
    """The daemon's case: several Stop hooks ingest one session file at once through one App."""
    from concurrent.futures import ThreadPoolExecutor

    from lcm_framework.ingest import ingest_file

    proj = tmp_path / "proj"
    src, sessions = _corpus(tmp_path, proj)
    reference = _reference(tmp_path, proj, src, sessions)
    app = make_app(proj, **{"import.batch_size": BATCH})
    try:
        with ThreadPoolExecutor(4) as pool:
            reports = list(pool.map(lambda p: ingest_file(app, p), [src / "c0.jsonl"] * 2 + [src / "c1.jsonl"] * 2))
        assert all(r.ok for r in reports), [r.error for r in reports]
        assert import_sources(app, [src], batch_size=int(BATCH)).errors == []
        got = snapshot(app, proj, sessions)
    finally:
        app.close()
    assert got["conversations"] == reference["conversations"] and got["native"] == reference["native"]
    assert got["quarantine"] == reference["quarantine"]
