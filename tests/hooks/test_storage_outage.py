"""Storage unreachable while the daemon is up: the event stays in the outbox and is retried, never dropped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from lcm_framework.outbox import Outbox, outbox_path
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, OFFLINE_ENV
from tests.daemon.support import DaemonProcess, free_port

SESSION = CLAUDE_SAMPLE_ID


def test_unreachable_database_keeps_events_for_retry(lcm_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    transcript = project / f"{SESSION}.jsonl"
    shutil.copyfile(CLAUDE_SAMPLE, transcript)
    port = free_port()
    down_db = {"LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_ALLOW_PLAINTEXT": "true",
               "LCM_POSTGRES_URL": f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"}
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port),
           "LCM_DAEMON_AUTOSTART": "false", **down_db}
    daemon = DaemonProcess(lcm_env, port, env=down_db).start()
    try:
        ctx = httpx.post(f"{daemon.url}/context", headers={"Authorization": f"Bearer {daemon.token}"},
                         json={"project": str(project), "session_id": SESSION})
        assert ctx.status_code == 503 and "unreachable" in ctx.json()["message"]
        assert "postgres@" not in ctx.text  # sanitized: no URL

        payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
                   "hook_event_name": "Stop"}
        result = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", "Stop"],
                                input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        deadline = time.monotonic() + 30
        attempts = 0
        while time.monotonic() < deadline and attempts < 2:
            with Outbox(outbox_path(lcm_env)) as box:
                (event,) = box.events()
            attempts = event.attempts
            time.sleep(0.2)
        assert attempts >= 2 and event.processed_at is None and event.last_error == "unavailable"
    finally:
        daemon.stop()
