"""``lcm stats --storage``, ``lcm vacuum`` and doctor's free-space warning, as a user runs them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.conftest import run_lcm
from tests.ingest.support import claude_records, write_jsonl


def test_storage_figures_vacuum_and_the_free_space_warning(lcm_env: Path, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    transcript = write_jsonl(root / "s.jsonl", claude_records("storage-session", str(root), 150,
                                                             text="the deploy pipeline retried the socket " * 8))
    assert run_lcm("import", str(transcript), cwd=root).returncode == 0
    shown = run_lcm("stats", "--storage", "--json", cwd=root)
    assert shown.returncode == 0, shown.stderr
    (row,) = json.loads(shown.stdout)["projects"]
    assert row["messages"] == 600 and row["transcript_bytes"] == transcript.stat().st_size
    assert row["compression_saved_bytes"] > 0 and "native_records" in row["objects"]
    assert row["bytes_per_transcript_byte"] > 0  # small projects pay fixed costs; the benchmark has the figures
    text = run_lcm("stats", "--storage", cwd=root).stdout
    assert "stored bytes per transcript byte imported" in text and "native_records" in text

    (db,) = (lcm_env / "projects").glob("*/lcm.db")
    raw = sqlite3.connect(db)  # make room to reclaim: a big table written and dropped
    raw.execute("CREATE TABLE filler (x BLOB)")
    raw.executemany("INSERT INTO filler VALUES (?)", [(b"\0" * 4096,) for _ in range(6000)])
    raw.commit()
    raw.execute("DROP TABLE filler")
    raw.commit()
    raw.close()
    doctor = json.loads(run_lcm("doctor", "--json", cwd=root).stdout)
    (free,) = [c for c in doctor["checks"] if c["name"] == "free_space"]
    assert free["status"] == "warn" and free["fix"] == "lcm vacuum --all-projects"

    vacuum = run_lcm("vacuum", "--json", cwd=root)
    assert vacuum.returncode == 0, vacuum.stderr
    (done,) = json.loads(vacuum.stdout)["projects"]
    assert done["bytes_after"] < done["bytes_before"] - 16 * 2**20
    doctor = json.loads(run_lcm("doctor", "--json", cwd=root).stdout)
    assert [c["status"] for c in doctor["checks"] if c["name"] == "free_space"] == ["ok"]
    assert run_lcm("verify", cwd=root).returncode == 0
