"""`lcm grep --include-meta` finds what the real agents wrote around the conversation, which plain grep never
returns (it is not stored as messages)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.compaction.helpers import project_dir
from tests.conftest import run_lcm

WRITTEN = Path(__file__).resolve().parent.parent / "formats" / "agent_written"


def lcm(root: Path, *args: str) -> tuple[int, str, str]:
    done = run_lcm("--project", str(root), *args, cwd=root)
    return done.returncode, done.stdout, done.stderr


def test_scaffolding_and_lcm_context_are_found_only_with_include_meta(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    for name in ("codex-0.171.0-restored.jsonl", "claude-2.1.197-compact.jsonl"):
        shutil.copyfile(WRITTEN / name, tmp_path / name)
        code, _, err = lcm(root, "import", str(tmp_path / name), "--project", str(root))
        assert code == 0, err
    assert lcm(root, "grep", "skills_instructions", "--mode", "substring")[0] == 1
    code, out, err = lcm(root, "grep", "skills_instructions", "--mode", "substring", "--include-meta", "--json")
    assert code == 0, err
    meta = json.loads(out)["meta_hits"]
    assert "agent_scaffolding" in {h["kind"] for h in meta} and all(h["id"].startswith("native_") for h in meta)
    code, out, _ = lcm(root, "grep", "Restored context (LCM)", "--mode", "substring", "--include-meta", "--json")
    assert code == 0 and {h["kind"] for h in json.loads(out)["meta_hits"]} == {"lcm_context"}
    code, out, _ = lcm(root, "grep", "local-command-caveat", "--mode", "regex", "--include-meta")
    assert code == 0 and "client_meta" in out and "kept out of the conversation" in out
    code, out, _ = lcm(root, "grep", "hello-e2e-marker", "--include-meta", "--json")
    assert code == 0 and json.loads(out)["groups"]  # the conversation itself is still found as messages
