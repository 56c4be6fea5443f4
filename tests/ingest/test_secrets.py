"""A corpus of fake secrets (every kind the built-in pack covers) in text, tool inputs, tool outputs and
JSON keys: after import none appears anywhere in the database files or the quarantine files."""

from __future__ import annotations

import json
from pathlib import Path

from lcm_framework.ingest import import_sources
from tests.scrub.corpus import corpus

from .support import claude_records, codex_records, make_app, write_jsonl


def _claude_with_secrets(session: str, cwd: str, secrets: list[tuple[str, str, str]]) -> list[dict[str, object]]:
    records = claude_records(session, cwd, 1)
    base = {k: v for k, v in records[0].items() if k not in ("type", "message", "uuid", "parentUuid")}
    for n, (rule, text, _secret) in enumerate(secrets):
        tool_id = f"toolu_secret_{n}"
        records += [
            {**base, "uuid": f"s{n}-1", "type": "user", "message": {"role": "user", "content": f"use this: {text}"}},
            {**base, "uuid": f"s{n}-2", "type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": tool_id, "name": "Bash",
                 "input": {"command": f"echo {text}", "env": {text: "1"}}}]}},
            {**base, "uuid": f"s{n}-3", "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": f"{rule} output:\n{text}\n"}]}},
            {**base, "uuid": f"s{n}-4", "type": "system", "content": f"note {text}", "meta": {text: {"nested": text}}},
        ]
    return records


def _codex_with_secrets(session: str, cwd: str, secrets: list[tuple[str, str, str]]) -> list[dict[str, object]]:
    records = codex_records(session, cwd, 1)
    for n, (_rule, text, _secret) in enumerate(secrets):
        ts = "2025-01-01T01:00:00.000Z"
        records += [
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call", "name": "shell", "call_id": f"c{n}",
                "arguments": json.dumps({"command": ["sh", "-c", text], text: True})}},
            {"timestamp": ts, "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": f"c{n}", "output": f"printed {text}"}},
        ]
    return records


def _forms(secret: str) -> set[bytes]:
    """The secret as raw bytes and as it would look inside JSON text (escaped), plus its longest line."""
    forms = {secret.encode(), json.dumps(secret)[1:-1].encode(), json.dumps(json.dumps(secret))[3:-3].encode()}
    longest = max(secret.splitlines(), key=len)
    if len(longest) >= 16:
        forms.add(longest.encode())
    return forms


def test_no_secret_reaches_the_database_or_the_quarantine(tmp_path: Path, lcm_env: Path) -> None:
    secrets = corpus(seed=11)
    assert len(secrets) >= 40
    proj = tmp_path / "project"
    src = tmp_path / "src"
    write_jsonl(src / "claude.jsonl", _claude_with_secrets("sec-claude", str(proj), secrets))
    write_jsonl(src / "rollout-secrets.jsonl", _codex_with_secrets("sec-codex", str(proj), secrets))
    app = make_app(proj)
    try:
        report = import_sources(app, [src])
        assert report.errors == []
        assert report.stored > 0 and report.messages > 0
        covered = {rule for rule, _t, _s in secrets}
        assert sum(report.redactions.values()) >= len(covered)
        with app.project(proj) as st:
            assert st.redaction_admin.get_counts() == report.redactions
    finally:
        app.close()
    stored = [p for p in lcm_env.rglob("*") if p.is_file()]
    assert any("transcript-quarantine" not in str(p) for p in stored)
    blob = b"".join(p.read_bytes() for p in stored)
    leaked = [rule for rule, _text, secret in secrets if any(form in blob for form in _forms(secret))]
    assert leaked == []
