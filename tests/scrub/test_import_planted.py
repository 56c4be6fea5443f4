"""A default ``lcm import`` of sessions holding a fake secret of every built-in family stores none of them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_lcm
from tests.ingest.support import claude_records, write_jsonl

from .corpus import corpus


def test_default_import_stores_no_planted_secret_in_any_position(tmp_path: Path, lcm_env: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    planted = corpus(seed=31)
    records = []
    for n, (_, text, _) in enumerate(planted):
        turn = claude_records(f"planted-{n}", str(project), 1, text=text)  # user text, tool input and output
        turn[2]["toolUseResult"] = {"stdout": f"ok\n{text}\n", "parsed": {text: n}}  # tool output, JSON key
        records += turn
    src = write_jsonl(tmp_path / "src" / "planted.jsonl", records)
    result = run_lcm("import", str(src), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["messages"] >= len(planted) * 3
    assert summary["quarantined"] == {}, summary["quarantined"]  # redacted, not refused
    stored = b"".join(p.read_bytes() for p in (lcm_env / "projects").rglob("*") if p.is_file())
    quarantine = b"".join(p.read_bytes() for p in lcm_env.rglob("*quarantine*") if p.is_file())
    for rule_id, _, secret in planted:
        assert secret.encode() not in stored, rule_id
        assert secret.encode() not in quarantine, rule_id
    assert b"[REDACTED:" in stored
