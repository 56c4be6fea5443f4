"""The contrib Gemini CLI format plugin, installed on its own and found through its entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_lcm

from .conftest import CONTRIB

SAMPLE = CONTRIB / "samples" / "session-2025-11-03T10-15-4a9c2e1f.jsonl"

PROBE = """
import io, json, sys
from pathlib import Path
from lcm_framework.kernel.plugins import build_plugins
plugins = build_plugins(stderr=io.StringIO())
lines = [json.loads(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip()]
identifier = plugins.sniff_format(lines[:5])
fmt = plugins.formats()[identifier]
mapped = [fmt.map_record(r) for r in lines]
msgs = [m.message for m in mapped if m.message is not None]
parts = [p for m in msgs for p in m.parts]
print(json.dumps({
    "identifier": identifier,
    "provider": fmt.provider,
    "owner": plugins.provenance("format")[identifier],
    "session_ids": sorted({m.session_id for m in mapped if m.session_id}),
    "roles": [m.role.value for m in msgs],
    "calls": sorted(p.tool_call_id for p in parts if p.kind.value == "tool_call"),
    "results": sorted(p.tool_call_id for p in parts if p.kind.value == "tool_result"),
    "errors": sum(p.is_error for p in parts),
    "content": "\\n".join(m.content for m in msgs),
}))
"""


def test_lcm_plugins_lists_the_installed_distribution(site: Path) -> None:
    result = run_lcm("plugins", "--json", env={"PYTHONPATH": str(site)})
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    gemini = rows["gemini_cli"]
    assert gemini["distribution"] == "lcm-format-gemini"
    assert gemini["version"] == "0.1.0"
    assert gemini["builtin"] is False
    assert gemini["hooks"] == ["lcm_register_agents", "lcm_register_formats"]
    assert gemini["registered"] == {"agents": ["gemini"], "formats": ["gemini-cli/gemini-jsonl/v1"]}


def test_not_listed_without_the_distribution() -> None:
    result = run_lcm("plugins", "--json")
    assert result.returncode == 0, result.stderr
    assert "gemini_cli" not in {row["name"] for row in json.loads(result.stdout)}


def test_installed_plugin_sniffs_and_maps_its_sample(site: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(SAMPLE)], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    report = json.loads(out.stdout)
    assert report["identifier"] == "gemini-cli/gemini-jsonl/v1"
    assert (report["provider"], report["owner"]) == ("gemini", "gemini_cli")
    assert report["session_ids"] == ["4a9c2e1f-6b3d-4e8a-9f1c-2d7b5e0a3c86"]
    assert report["roles"][0] == "user" and report["roles"][-1] == "assistant"  # the closing info notice: native
    assert set(report["calls"]) == set(report["results"]) and len(set(report["calls"])) == 4
    assert report["errors"] >= 1  # the failing `npm test` (Exit Code: 1)
    assert "TypeError: Cannot read properties of undefined (reading 'temp')" in report["content"]


def test_builtin_formats_do_not_claim_gemini_files() -> None:
    head = [json.loads(line) for line in SAMPLE.read_text().splitlines()[:5]]
    probe = "import io,json,sys; from lcm_framework.kernel.plugins import build_plugins; " + (
        "print(json.dumps(build_plugins(stderr=io.StringIO()).sniff_format(json.loads(sys.argv[1]))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(head)], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout) is None


def test_lcm_import_reads_a_gemini_session_through_the_plugin(site: Path) -> None:
    env = {"PYTHONPATH": str(site)}
    result = run_lcm("import", "--json", str(SAMPLE), env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["files"], report["records"], report["stored"], report["messages"]) == (1, 13, 13, 8)
    assert report["quarantined"] == {} and report["errors"] == []
    (conversation,) = report["conversations"]
    assert conversation["session_id"] == "4a9c2e1f-6b3d-4e8a-9f1c-2d7b5e0a3c86"
    assert conversation["project_root"] == "/home/dev/weatherbot"
    found = run_lcm("--project", "/home/dev/weatherbot", "grep", "--mode", "substring", "--json", "(reading 'temp')")
    assert found.returncode == 0, found.stderr
    assert "Cannot read properties of undefined" in found.stdout
    again = json.loads(run_lcm("import", "--json", str(SAMPLE), env=env).stdout)
    assert (again["stored"], again["messages"]) == (0, 0)
