"""Exploration summaries of large files by kind: code, structured data, logs, prose."""

from __future__ import annotations

import json

from lcm_framework.explore import EXPLORATION_CHARS, explore


def test_code_lists_language_and_top_level_definitions_with_line_numbers() -> None:
    lines = ['"""Billing."""', "", "import os", ""]
    for n in range(300):
        lines += [f"def charge_{n}(amount):", f"    return amount * {n}", ""]
    lines.insert(100, "class Ledger:")
    text = explore("\n".join(lines), "src/billing.py")
    assert text.startswith("src/billing.py: 904 lines") and "Python code, 301 top-level definitions" in text
    assert "def charge_0 (line 5)" in text and "def charge_1 (line 8)" in text
    assert "return amount" not in text and len(text) <= EXPLORATION_CHARS


def test_structured_files_list_their_top_level_keys() -> None:
    data = json.dumps({"name": "svc", "replicas": 3, "routes": [{"path": "/a"}] * 5, "limits": {"cpu": 1, "mem": 2}})
    keys = "name (str), replicas (int), routes (array of 5), limits (object, 2 keys)"
    assert f"JSON object with 4 top-level keys: {keys}" in explore(data, "deploy.json")
    yaml = "service: billing\nworkers:\n  count: 3\nretry_budget_ms: 800\n"
    assert "YAML file; top-level keys: service (line 1), workers (line 2), retry_budget_ms (line 4)" \
        in explore(yaml, "config/billing.yaml")


def test_logs_give_their_span_levels_and_errors() -> None:
    lines = [f"2026-03-01T08:{m:02d}:00Z INFO worker processed {m} items" for m in range(50)]
    lines[20] = "2026-03-01T08:20:00Z ERROR worker lost connection to db-7"
    text = explore("\n".join(lines), None)
    assert "log from 2026-03-01T08:00:00 to 2026-03-01T08:49:00" in text
    assert "INFO 49, ERROR 1" in text and "lost connection to db-7" in text


def test_prose_lists_headings() -> None:
    doc = "# Runbook\nIntro text.\n\n## Restart the relay\nsteps\n\n## Rotate keys\nmore"
    text = explore(doc, "docs/runbook.md")
    assert "3 headings: Runbook (line 1), Restart the relay (line 4), Rotate keys (line 7)" in text
