"""Codex through its hooks: a growing rollout file, `lcm hook ... --agent codex` subprocesses, a real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from lcm_framework.ingest import ingest_file
from lcm_framework.outbox import read_backlog
from tests.conftest import OFFLINE_ENV
from tests.daemon.support import DaemonProcess, free_port
from tests.ingest.support import codex_records, make_app, write_jsonl

SESSION = "019d036d-c7fa-72d2-b6fd-78878bfe34e4"


def codex_hook(event: str, payload: dict[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", event, "--agent", "codex"],
                            input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result


def test_codex_session_is_ingested_through_its_hooks(lcm_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    rollout = tmp_path / "codex" / "sessions" / "2026" / "01" / "01" / f"rollout-2026-01-01T00-00-00-{SESSION}.jsonl"
    records = codex_records(SESSION, str(project), turns=6)
    half = len(records) // 2
    write_jsonl(rollout, records[:half])
    port = free_port()
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port),
           "LCM_DAEMON_AUTOSTART": "false"}
    base = {"session_id": SESSION, "transcript_path": str(rollout), "cwd": str(project), "model": "gpt-5-codex"}
    daemon = DaemonProcess(lcm_env, port).start()
    try:
        codex_hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env)
        codex_hook("Stop", {**base, "hook_event_name": "Stop", "turn_id": "t1", "stop_hook_active": False}, env)
        write_jsonl(rollout, records[half:], mode="a")
        codex_hook("Stop", {**base, "hook_event_name": "Stop", "turn_id": "t2", "stop_hook_active": False}, env)
        codex_hook("SessionEnd", {**base, "hook_event_name": "SessionEnd"}, env)
        deadline = time.monotonic() + 60
        while read_backlog(lcm_env).pending and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.1)
        assert read_backlog(lcm_env).pending == 0  # type: ignore[union-attr]
    finally:
        daemon.stop()

    def messages(app) -> list[tuple[int, str, str]]:  # type: ignore[no-untyped-def]
        with app.project(project) as storage:
            (conversation,) = storage.conversations.find_conversations(SESSION)
            return [(m.seq, m.role.value, m.content)
                    for m in storage.conversations.list_messages(conversation.conversation_id)]

    app = make_app(project)
    fresh = make_app(project, home=tmp_path / "fresh")
    try:
        assert ingest_file(fresh, rollout, project=project).error is None
        expected = messages(fresh)
        assert len(expected) >= 6 * 4
        assert messages(app) == expected
    finally:
        app.close()
        fresh.close()
