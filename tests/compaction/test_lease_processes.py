"""Two processes compacting the same conversation take turns (lease); the DAG stays consistent."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from lcm_framework.recall import verify

from .helpers import ingest, project_dir, scripted_app, texts

WORKER = Path(__file__).with_name("lease_worker.py")


def test_two_processes_never_compact_one_conversation_at_once(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    app, _ = scripted_app(root, {})
    with app.project() as storage:
        ingest(storage, "shared", texts(60))
    outs = [tmp_path / f"out{n}.json" for n in range(2)]
    procs = [subprocess.Popen([sys.executable, str(WORKER), str(root), str(out)]) for out in outs]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    results = [json.loads(out.read_text()) for out in outs]
    assert not any(r["busy"] for r in results)
    working = [r for r in results if r["calls"]]
    if len(working) == 2:  # both did work: their summarizer calls never interleave
        a, b = sorted(working, key=lambda r: r["calls"][0])
        assert max(a["calls"]) < min(b["calls"])
    with app.project() as storage:
        cid = storage.conversations.find_conversations("shared")[0].conversation_id
        stored_summaries = sum(storage.summaries.count_by_depth(cid).values())
        assert stored_summaries == sum(r["created"] for r in results) > 0
        leaves = storage.summaries.list_summaries(cid, depth=0)
        covered = [m for leaf in leaves for m in storage.summaries.source_message_ids(leaf.summary_id)]
        assert len(covered) == len(set(covered))
        assert verify(storage).ok
    app.close()


def test_a_killed_compaction_leaves_a_consistent_dag(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    app, _ = scripted_app(root, {})
    with app.project() as storage:
        ingest(storage, "shared", texts(200))
    out = tmp_path / "out.json"
    proc = subprocess.Popen([sys.executable, str(WORKER), str(root), str(out), "hang"])
    committed = Path(str(out) + ".committed")  # touched once a summary is committed; the worker then blocks
    try:
        deadline = time.monotonic() + 120
        while not committed.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert committed.exists(), f"worker never committed a summary (exit status {proc.poll()})"
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()  # killed mid-sweep, before its report
    with app.project() as storage:
        cid = storage.conversations.find_conversations("shared")[0].conversation_id
        assert storage.conversations.message_count(cid) == 200
        assert sum(storage.summaries.count_by_depth(cid).values()) >= 1  # the committed work survives the kill
        assert verify(storage).ok
        lease = storage.coordination.acquire_lease(f"compact:{cid}", "after-the-crash", 60)
        assert lease is None  # the dead holder's lease is still live until its TTL expires
    app.close()
