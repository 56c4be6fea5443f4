"""``lcm import`` through the real console entry point."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_lcm

from .support import claude_records, codex_records, write_jsonl


def test_help_explains_the_command() -> None:
    result = run_lcm("import", "--help")
    assert result.returncode == 0
    for text in ("--provider", "--dry-run", "--batch-size", "--json", "--project", "resumable", "quarantined"):
        assert text in result.stdout


def test_json_summary_then_human_summary_and_failures(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src = tmp_path / "src"
    write_jsonl(src / "a.jsonl", claude_records("cli-1", str(proj), 2))
    write_jsonl(src / "rollout-b.jsonl", codex_records("cli-2", str(proj), 1))
    with (src / "a.jsonl").open("a") as fh:
        fh.write("not json\n")
    (src / "notes.jsonl").write_text('{"just": "a log"}\n')
    result = run_lcm("import", str(src), "--json", "--batch-size", "3")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["files"] == 3 and summary["files_by_status"] == {"imported": 2, "skipped": 1}
    assert summary["quarantined"] == {"malformed-json": 1} and summary["errors"] == []
    assert summary["messages"] > 0 and summary["stored"] == summary["records"] - 1
    assert {c["session_id"] for c in summary["conversations"]} == {"cli-1", "cli-2"}
    assert {c["project_root"] for c in summary["conversations"]} == {str(proj)}
    per_file = {Path(f["path"]).name: f for f in summary["file_list"]}
    assert {n: f["status"] for n, f in per_file.items()} == {"a.jsonl": "imported", "rollout-b.jsonl": "imported",
                                                            "notes.jsonl": "skipped"}
    assert per_file["a.jsonl"]["quarantined"] == 1 and per_file["a.jsonl"]["session_id"] == "cli-1"
    assert sum(f["messages"] for f in per_file.values()) == summary["messages"]
    assert sum(f["records"] for f in per_file.values()) == summary["records"]
    again = run_lcm("import", str(src), str(tmp_path / "missing.jsonl"), str(src / "notes.jsonl"))
    assert again.returncode == 1
    assert "nothing new was imported" in again.stdout and "quarantined: 0" in again.stdout
    assert "not_found" in again.stdout and "unknown_format" in again.stdout
    bad = run_lcm("import", str(src), "--batch-size", "0")
    assert bad.returncode == 2 and "batch size" in bad.stderr
