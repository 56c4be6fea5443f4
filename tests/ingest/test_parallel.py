"""Imports spread over worker processes: the same database as one process, progress, recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.errors import ConfigError
from lcm_framework.ingest import ProgressEvent, import_sources
from lcm_framework.ingest.discovery import SourceSpec
from lcm_framework.ingest.parallel import AUTO_MIN_BYTES, worker_count
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import OFFLINE_ENV

from .support import claude_records, codex_records, make_app, snapshot, write_jsonl

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _corpus(tmp_path: Path, proj: Path) -> Path:
    src = tmp_path / "src"
    for i in range(6):
        write_jsonl(src / f"c{i}.jsonl", claude_records(f"par-{i}", str(proj), 10 + 5 * i, text=f"token {SECRET}"))
    write_jsonl(src / "rollout-p.jsonl", codex_records("par-codex", str(proj), 12))
    with (src / "c2.jsonl").open("ab") as fh:
        fh.write(b'{"broken": \n')
    write_jsonl(src / "c2.jsonl", claude_records("par-2", str(proj), 3, start=20), mode="a")
    return src


def _comparable(snap: dict[str, Any]) -> dict[str, Any]:
    """A snapshot without the checkpoints' conversation ids (surrogates, numbered in file order)."""
    out = dict(snap)
    checkpoints = {}
    for key, cp in snap["checkpoints"].items():
        state = json.loads(cp.state_json)
        state.pop("conversation_id", None)
        checkpoints[key] = (cp.revision > 0, cp.byte_offset, cp.prefix_sha256, cp.last_source_ordinal,
                            cp.imported, cp.skipped, cp.quarantined, state)
    out["checkpoints"] = checkpoints
    return out


def _import(tmp_path: Path, proj: Path, src: Path, home: str, workers: int,
            progress: Any = None) -> tuple[Any, dict[str, Any]]:
    app = make_app(proj, home=tmp_path / home)
    try:
        report = import_sources(app, [src], batch_size=7, workers=workers, progress=progress)
        return report, _comparable(snapshot(app, proj, _corpus_sessions()))
    finally:
        app.close()


def _without_ids(summary: dict[str, Any]) -> dict[str, Any]:
    conversations = [{k: v for k, v in c.items() if k != "conversation_id"} for c in summary["conversations"]]
    return {**summary, "conversations": sorted(conversations, key=lambda c: c["session_id"])}


def _corpus_sessions() -> list[str]:
    return [*(f"par-{i}" for i in range(6)), "par-codex"]


def test_workers_store_what_one_process_stores(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src = _corpus(tmp_path, proj)
    single, reference = _import(tmp_path, proj, src, "single", 1)
    events: list[ProgressEvent] = []
    parallel, got = _import(tmp_path, proj, src, "parallel", 3, events.append)
    assert single.errors == [] and parallel.errors == []
    assert got == reference
    assert _without_ids(parallel.summary()) == _without_ids(single.summary())
    assert [r.path for r in parallel.file_reports] == [r.path for r in single.file_reports]
    assert reference["quarantine"]["claude-code"] and SECRET not in json.dumps(reference["native"])
    done = sorted(str(e.path) for e in events if e.kind == "file_done")
    assert done == sorted(r.path for r in single.file_reports)
    assert events[0].kind == "start" and events[0].bytes_total == sum(p.stat().st_size for p in src.iterdir())
    assert any(e.kind == "bytes" for e in events)  # forwarded from the workers


def test_a_worker_that_dies_has_its_files_imported_by_the_others(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src = _corpus(tmp_path, proj)
    _, reference = _import(tmp_path, proj, src, "single", 1)
    killed: list[int] = []

    def kill_a_worker(event: ProgressEvent) -> None:
        if event.kind == "bytes" and not killed:
            children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
            workers = [int(pid) for pid in children if b"lcm_framework.ingest.worker" in
                       Path(f"/proc/{pid}/cmdline").read_bytes()]
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])

    report, got = _import(tmp_path, proj, src, "parallel", 3, kill_a_worker)
    assert killed
    assert report.errors == []
    assert got == reference


def _marked_processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_a_parallel_import_leaves_no_worker_and_a_rerun_converges(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src = _corpus(tmp_path, proj)
    _, reference = _import(tmp_path, proj, src, "single", 1)
    mark = f"LCM_TEST_MARK_{uuid.uuid4().hex}"
    home = tmp_path / "parallel"
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), mark: "1"}
    command = [sys.executable, "-m", "lcm_framework.cli.main", "import", str(src), "--batch-size", "7",
               "--workers", "3"]
    proc = subprocess.Popen(command, env=env, cwd=proj, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while proc.poll() is None and len(_marked_processes(mark)) < 3:  # the importer and its two workers
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    while _marked_processes(mark):  # the workers die with their parent
        assert time.monotonic() < deadline, "a worker outlived the killed import"
        time.sleep(0.01)
    done = subprocess.run(command, env=env, cwd=proj, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    app = make_app(proj, home=home)
    try:
        assert _comparable(snapshot(app, proj, _corpus_sessions())) == reference
    finally:
        app.close()


def _specs(n: int) -> list[SourceSpec]:
    return [SourceSpec(Path(f"/x/{i}.jsonl"), Path("/x"), f"{i}.jsonl") for i in range(n)]


def test_worker_count(tmp_path: Path) -> None:
    app = make_app(tmp_path / "proj")
    try:
        assert worker_count(app, 1, _specs(5), [AUTO_MIN_BYTES] * 5) == 0
        assert worker_count(app, 3, _specs(5), [10] * 5) == 3  # asked for: small imports too
        assert worker_count(app, 8, _specs(2), [10] * 2) == 2  # never more workers than files
        assert worker_count(app, 4, _specs(1), [10**9]) == 0
        assert worker_count(app, 0, _specs(5), [10] * 5) == 0  # auto: small imports stay in-process
        auto = min(os.cpu_count() or 1, 5, 8)
        assert worker_count(app, 0, _specs(5), [AUTO_MIN_BYTES] * 5) == (auto if auto >= 2 else 0)
        for bad in (-1, 65):
            with pytest.raises(ConfigError, match="workers"):
                worker_count(app, bad, _specs(5), [10] * 5)
    finally:
        app.close()


def test_in_process_plugins_keep_the_import_in_process(tmp_path: Path) -> None:
    """A plugin handed to build_plugins directly could not be loaded by a worker."""
    from lcm_framework.app import App
    from lcm_framework.config import load_config

    plugins = build_plugins(os.environ, extra=[("local", object())])
    assert not plugins.rebuildable
    assert build_plugins(os.environ).rebuildable
    app = App(load_config(project=tmp_path, env=dict(os.environ), plugins=build_plugins(dict(os.environ))), plugins)
    try:
        assert worker_count(app, 4, _specs(5), [10] * 5) == 0
    finally:
        app.close()


def test_workers_that_cannot_start_leave_the_import_to_the_parent(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    proj = tmp_path / "proj"
    src = _corpus(tmp_path, proj)
    _, reference = _import(tmp_path, proj, src, "single", 1)

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    report, got = _import(tmp_path, proj, src, "parallel", 2)
    assert report.errors == [] and got == reference


def test_workers_run_lcm_from_its_install_not_from_a_shadowing_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ``lcm_framework`` folder in the directory ``lcm import`` runs in (a checkout of another version,
    say) must not be what the workers import."""
    proj = tmp_path / "proj"
    src = _corpus(tmp_path, proj)
    shadow = tmp_path / "cwd" / "lcm_framework" / "ingest"
    shadow.mkdir(parents=True)
    for folder in (shadow.parent, shadow):
        (folder / "__init__.py").write_text("")
    ran = tmp_path / "shadow-ran"
    (shadow / "worker.py").write_text(f"open({str(ran)!r}, 'w').close()\n")
    monkeypatch.chdir(shadow.parent.parent)
    _, reference = _import(tmp_path, proj, src, "single", 1)
    report, got = _import(tmp_path, proj, src, "parallel", 3)
    assert not ran.exists()
    assert report.errors == []
    assert got == reference
