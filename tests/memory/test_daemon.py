"""Memory on the daemon over real HTTP, and prompt-time recall through ``lcm hook UserPromptSubmit``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lcm_framework.paths import project_id_for
from tests.compaction.helpers import project_dir
from tests.conftest import run_lcm
from tests.daemon.support import DaemonProcess, free_port

RELATED = "The integration tests fail again with Address already in use on port 8432"
UNRELATED = ["Add a dark mode toggle to the settings page", "Write a haiku about autumn leaves",
             "Please refactor the billing module to use dataclasses"]


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(tmp_path / "home", free_port()).start()
    try:
        yield proc
    finally:
        proc.stop()


def post(daemon: DaemonProcess, path: str, body: dict[str, Any]) -> Any:
    answer = httpx.post(f"{daemon.url}{path}", json=body, timeout=30,
                        headers={"Authorization": f"Bearer {daemon.token}"})
    assert answer.status_code in (200, 202), answer.text
    return answer.json()


def hook(daemon: DaemonProcess, root: Path, event: str, payload: dict[str, Any]) -> str:
    env = {"LCM_HOME": str(daemon.home), "LCM_DAEMON_PORT": str(daemon.port), "LCM_DAEMON_AUTOSTART": "false"}
    done = run_lcm("hook", event, cwd=root, env=env, input=json.dumps({"cwd": str(root), **payload}))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_memory_actions_and_tools_on_the_daemon(daemon: DaemonProcess, tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    added = post(daemon, "/memory", {"project": str(root), "action": "add",
                                     "text": "The live_server fixture must never bind the fixed port 8432",
                                     "tags": ["tests/conftest.py"]})
    assert added["id"] == "mem_1" and added["created"]
    stored = post(daemon, "/store", {"project": str(root), "text": "live_server fixture: never bind fixed port 8432"})
    assert stored["result"]["id"] == "mem_1" and not stored["result"]["created"]
    liked = post(daemon, "/feedback", {"project": str(root), "id": "mem_1", "useful": True})
    assert liked["result"]["confidence"] > stored["result"]["confidence"]
    listed = post(daemon, "/memory", {"project": str(root), "action": "list"})
    assert [m["id"] for m in listed["memories"]] == ["mem_1"]
    bad = httpx.post(f"{daemon.url}/memory", json={"project": str(root), "action": "explode"},
                     headers={"Authorization": f"Bearer {daemon.token}"})
    assert bad.status_code == 400
    assert post(daemon, "/recall", {"project": str(root), "prompt": "why is port 8432 busy"})["items"]
    user_store = daemon.home / "projects" / project_id_for(daemon.home / "user-memory")
    assert (daemon.home / "projects").is_dir() and not user_store.exists()  # recall never creates it


def test_a_related_prompt_gets_the_memory_an_unrelated_one_nothing(daemon: DaemonProcess, tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    for text in ("Root cause: the live_server fixture bound the hard-coded port 8432",
                 "Deploys go through the staging branch first"):
        post(daemon, "/memory", {"project": str(root), "action": "add", "text": text})
    post(daemon, "/memory", {"project": str(root), "action": "add", "user_wide": True,
                             "text": "Answer in British English"})
    out = hook(daemon, root, "UserPromptSubmit", {"session_id": "s1", "prompt": RELATED,
                                                  "hook_event_name": "UserPromptSubmit"})
    injected = json.loads(out)["hookSpecificOutput"]
    assert injected["hookEventName"] == "UserPromptSubmit"
    assert 'id="mem_1"' in injected["additionalContext"] and "mem_2" not in injected["additionalContext"]
    for prompt in UNRELATED:
        assert hook(daemon, root, "UserPromptSubmit", {"session_id": "s1", "prompt": prompt}) == ""
    stats = post(daemon, "/memory", {"project": str(root), "action": "stats"})
    assert {m["id"]: m["surfaced"] for m in stats["memories"]} == {"mem_1": 1, "mem_2": 0}
    shown = post(daemon, "/memory", {"project": str(root), "action": "show", "id": "mem_1"})
    assert shown["recall"]["surfaced"] == 1
    capped = post(daemon, "/recall", {"project": str(root), "prompt": RELATED})
    assert capped["items"][0]["id"] == "mem_1" and capped["tokens"] <= 400
    started = json.loads(hook(daemon, root, "SessionStart", {"session_id": "s2", "source": "startup"}))
    context = started["hookSpecificOutput"]["additionalContext"]
    assert 'id="mem_1"' in context and 'id="mem_2"' in context and 'id="gmem_1"' in context
    user = post(daemon, "/memory", {"project": str(root), "action": "stats", "user_wide": True})
    assert user["memories"][0]["surfaced"] == 1  # surfaced at session start, recorded in the user-wide scope
