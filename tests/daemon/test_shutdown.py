"""SIGTERM drains work in flight: the request finishes, storage is closed cleanly, nothing is lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from benchmarks.bench_hooks import SESSION, synthetic_transcript
from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from tests.daemon.support import DaemonProcess, free_port


def test_sigterm_lets_the_request_in_flight_finish(lcm_env: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    transcript = project / "session.jsonl"
    synthetic_transcript(transcript, project, turns=400)
    daemon = DaemonProcess(lcm_env, free_port()).start()
    headers = {"Authorization": f"Bearer {daemon.token}"}
    answers: list[httpx.Response] = []

    def ingest() -> None:
        answers.append(httpx.post(f"{daemon.url}/ingest", headers=headers, timeout=120, json={
            "project": str(project), "path": str(transcript), "session_id": SESSION, "compact": "full",
            "wait": True}))

    worker = threading.Thread(target=ingest)
    worker.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{daemon.url}/status", headers=headers).json()["in_flight"] >= 1:
            break
        time.sleep(0.01)
    else:
        raise AssertionError("the ingest never started")
    code = daemon.stop()  # SIGTERM, then wait
    worker.join(60)
    assert code == 0
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    assert answer.json()["ingest"]["messages"] == 800
    assert not (lcm_env / "daemon.pid").exists()

    app = App(load_config(project=project, plugins=build_plugins()), build_plugins())
    try:
        with app.project(project) as storage:
            (conversation,) = storage.conversations.find_conversations(SESSION)
            assert storage.conversations.message_count(conversation.conversation_id) == 800
    finally:
        app.close()
