"""Playing Claude Code: real hook payloads piped to ``lcm hook`` subprocesses, a real daemon, a growing
transcript, a SIGKILLed daemon in the middle, and an exact comparison of what is stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.ingest import ingest_file
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.outbox import Outbox, outbox_path, read_backlog
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, OFFLINE_ENV
from tests.daemon.support import DaemonProcess, free_port

SESSION = CLAUDE_SAMPLE_ID
HANG_GUARD_S = 60  # only catches a hook that hangs; hook latency is measured by benchmarks/bench_hooks.py


def hook(event: str, payload: dict[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "lcm_framework.cli.main", "hook", event], input=json.dumps(payload),
        env=env, capture_output=True, text=True, timeout=HANG_GUARD_S,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def claude_payload(event: str, transcript: Path, project: Path, **extra: object) -> dict[str, object]:
    """The JSON Claude Code writes on a hook's stdin."""
    return {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
            "hook_event_name": event, "permission_mode": "default", **extra}


def stored(app: App, project: Path) -> list[tuple[int, str, str]]:
    with app.project(project) as storage:
        conversations = storage.conversations.find_conversations(SESSION)
        assert len(conversations) == 1
        return [(m.seq, m.role.value, m.content)
                for m in storage.conversations.list_messages(conversations[0].conversation_id)]


def wait_for(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


@pytest.mark.slow
def test_kill_the_daemon_mid_session_and_lose_nothing(lcm_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    transcript = project / f"{SESSION}.jsonl"
    lines = CLAUDE_SAMPLE.read_text().splitlines(keepends=True)
    chunks = [lines[i:i + 8] for i in range(0, len(lines), 8)]
    port = free_port()
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port),
           "LCM_DAEMON_AUTOSTART": "false"}
    daemon = DaemonProcess(lcm_env, port).start()
    try:
        transcript.write_text("")
        start = hook("SessionStart", claude_payload("SessionStart", transcript, project, source="startup"), env)
        assert start.stdout.strip() == ""  # nothing stored yet: nothing to inject
        killed_at = len(chunks) // 3
        restarted_at = 2 * len(chunks) // 3
        for n, chunk in enumerate(chunks):
            if n == killed_at:
                daemon.kill()
            if n == restarted_at:
                assert read_backlog(lcm_env).pending >= restarted_at - killed_at  # type: ignore[union-attr]
                daemon = DaemonProcess(lcm_env, port).start()
            with transcript.open("a") as fh:
                fh.writelines(chunk)
            result = hook("Stop", claude_payload("Stop", transcript, project, stop_hook_active=False), env)
            if killed_at <= n < restarted_at:
                assert "outbox" in result.stderr
        hook("SessionEnd", claude_payload("SessionEnd", transcript, project, reason="exit"), env)
        wait_for(lambda: read_backlog(lcm_env).pending == 0)  # type: ignore[union-attr]
        with Outbox(outbox_path(lcm_env)) as box:
            events = box.events()
        assert all(e.processed_at is not None and e.last_error is None for e in events)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert {"cwd", "session_id", "transcript_path"} <= set(events[0].payload)
        assert not any("message" in e.payload for e in events)  # ids and paths only, no content
    finally:
        daemon.stop()

    app = App(load_config(project=project, plugins=build_plugins()), build_plugins())
    try:
        got = stored(app, project)
    finally:
        app.close()
    # The oracle: the same complete transcript imported once into a fresh home.
    fresh_home = tmp_path / "fresh"
    fresh = App(load_config(project=project, env={**os.environ, "LCM_HOME": str(fresh_home)},
                            plugins=build_plugins()), build_plugins())
    try:
        report = ingest_file(fresh, transcript, project=project)
        assert report.error is None
        expected = stored(fresh, project)
    finally:
        fresh.close()
    assert len(expected) >= 25
    assert got == expected  # every message, in order, exactly once
    assert [seq for seq, _r, _c in got] == list(range(len(got)))

    # After a compaction, SessionStart of the resumed session injects the restored context.
    daemon = DaemonProcess(lcm_env, port).start()
    try:
        compacted = httpx.post(f"{daemon.url}/compact", headers={"Authorization": f"Bearer {daemon.token}"},
                               json={"project": str(project), "session_id": SESSION, "mode": "full"}, timeout=120)
        assert compacted.status_code == 200, compacted.text
        resumed = hook("SessionStart", claude_payload("SessionStart", transcript, project, source="resume"), env)
    finally:
        daemon.stop()
    injected = json.loads(resumed.stdout)["hookSpecificOutput"]
    assert injected["hookEventName"] == "SessionStart"
    context = injected["additionalContext"]
    assert "lcm_grep" in context and "lcm_expand" in context and '<summary id="sum_' in context

    # With the daemon down, SessionStart still injects the context (read from storage) and queues the event.
    offline = hook("SessionStart", claude_payload("SessionStart", transcript, project, source="resume"), env)
    assert json.loads(offline.stdout)["hookSpecificOutput"]["additionalContext"] == context
    assert "outbox" in offline.stderr
