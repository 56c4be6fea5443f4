"""``lcm sensitive audit`` reads every stored text, also those written before scrubbing covered their door:
conversation titles, memory tags, the queries of recorded surfacings, large-file names and explorations."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from lcm_framework.app import App
from lcm_framework.compaction.ids import file_id
from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.models import LargeFile, NewMemory
from tests.conftest import run_lcm

from .corpus import CASES, Gen


def test_audit_finds_secrets_in_titles_tags_surfacing_queries_and_large_files(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    context, secret = CASES["github-pat"](Gen(25))
    app = App(load_config(project=project, plugins=build_plugins()), build_plugins())
    try:
        with app.project() as storage:  # as an older LCM (or another tool) may have stored them, unscrubbed
            conversation = storage.conversations.create_conversation("audit-all", title=f"about {context}")
            memory = storage.promoted_memory.create_memory(NewMemory("Deploys go through staging", (context,)))
            storage.recall.record_surfacing([f"mem_{memory.memory_id}"], query=f"why {context}")
            content = "big file body\n" * 50
            storage.large_files.create_file(LargeFile(
                file_id(content), conversation.conversation_id, None, f"{secret}.log", "text/plain",
                len(content), 200, "0" * 64, f"A log that mentions {context}", datetime.now(UTC)))
    finally:
        app.close()
    audited = run_lcm("sensitive", "audit", "--json", cwd=project)
    assert audited.returncode == 1, audited.stderr
    report = json.loads(audited.stdout)
    found = {(f["kind"], f["field"]) for f in report["findings"] if f["rule_id"] == "github-pat"}
    assert found == {("conversation", "title"), ("memory", "tags"), ("surfacing", "query"),
                     ("large_file", "file_name"), ("large_file", "exploration_summary")}
    assert secret not in audited.stdout
    [scanned] = [p["scanned"] for p in report["projects"]]
    assert scanned["surfacing"] == 1 and scanned["large_file"] == 1 and scanned["conversation"] == 1
