"""The local hook outbox: private file, migrations, gap-safe sequence, retry state, bad input."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lcm_framework.errors import LcmError
from lcm_framework.outbox import MAX_BACKOFF_S, SCHEMA_VERSION, Outbox, OutboxError, outbox_path, read_backlog


def test_file_is_private_wal_and_migrated(lcm_env: Path) -> None:
    path = outbox_path(lcm_env)
    with Outbox(path) as box:
        box.capture("Stop", {"session_id": "s"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    with Outbox(path) as box:  # reopening does not migrate twice nor change the machine id
        assert len(box.events()) == 1
        assert box.events()[0].machine_id == box.machine_id


def test_newer_schema_is_refused(lcm_env: Path) -> None:
    path = outbox_path(lcm_env)
    Outbox(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(OutboxError, match="newer") as refused:
        Outbox(path)
    assert isinstance(refused.value, LcmError)  # what the CLI prints as a clear error, never a traceback


def test_sequence_is_contiguous_across_concurrent_processes(lcm_env: Path) -> None:
    path = outbox_path(lcm_env)
    Outbox(path).close()
    code = (
        "import sys; from pathlib import Path; from lcm_framework.outbox import Outbox\n"
        "with Outbox(Path(sys.argv[1]), timeout_s=30) as box:\n"
        "    for i in range(25): box.capture('Stop', {'writer': sys.argv[2], 'i': i})\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(n)]) for n in range(4)]
    assert all(p.wait(60) == 0 for p in procs)
    with Outbox(path) as box:
        events = box.events()
    assert [e.seq for e in events] == list(range(1, 101))
    assert len({e.uuid for e in events}) == 100
    for writer in "0123":  # each writer's events keep their order
        mine = [e.payload["i"] for e in events if e.payload["writer"] == writer]
        assert mine == list(range(25))


def test_ready_processed_and_backoff(lcm_env: Path) -> None:
    with Outbox(outbox_path(lcm_env)) as box:
        a = box.capture("Stop", {"n": 1}, now=100.0)
        b = box.capture("SessionEnd", {"n": 2}, now=101.0)
        assert [e.uuid for e in box.ready(now=200.0)] == [a.uuid, b.uuid]
        first = box.mark_failed(a.uuid, "storage_unavailable", now=200.0)
        assert first == 201.0
        assert [e.uuid for e in box.ready(now=200.5)] == [b.uuid]
        second = box.mark_failed(a.uuid, "storage_unavailable", now=300.0)
        assert second == 302.0
        for _ in range(20):
            last = box.mark_failed(a.uuid, "x", now=1000.0)
        assert last == 1000.0 + MAX_BACKOFF_S
        box.mark_processed(b.uuid, now=400.0, local_only=True)  # no inbox (SQLite): nothing left to deliver
        backlog = box.backlog()
        assert (backlog.pending, backlog.failing, backlog.processed) == (1, 1, 1)
        assert backlog.last_error == "x"
        box.mark_processed(a.uuid, error_code="not_found", now=2000.0, local_only=True)
        assert box.backlog().pending == 0
        assert [e.last_error for e in box.events()] == ["not_found", None]
        assert box.prune_processed(older_than_s=10, now=3000.0) == 2
    assert read_backlog(lcm_env).pending == 0  # type: ignore[union-attr]


def test_refuses_huge_nul_or_surrogate_payloads_and_keeps_the_rest(lcm_env: Path) -> None:
    with Outbox(outbox_path(lcm_env)) as box:
        box.capture("Stop", {"ok": True})
        with pytest.raises(OutboxError, match="larger"):
            box.capture("Stop", {"blob": "x" * 100_000})
        with pytest.raises(OutboxError, match="U\\+0000"):
            box.capture("Stop", {"bad": "a\x00b"})
        for unencodable in ({"cwd": "/tmp/\ud800"}, {"\udfff": 1}, {"nested": [{"x": "\ud83d"}]}):
            with pytest.raises(OutboxError, match="lone surrogate"):
                box.capture("Stop", unencodable)
        box.capture("Stop", {"ok": 2})
        assert [e.seq for e in box.events()] == [1, 2]  # refused events reserve no sequence number


def test_unwritable_home_is_a_typed_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.raises(OutboxError, match="cannot be opened"):
        Outbox(blocked / "outbox.db")


def test_no_backlog_without_outbox(lcm_env: Path) -> None:
    assert read_backlog(lcm_env) is None
