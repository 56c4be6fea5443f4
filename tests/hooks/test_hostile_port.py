"""``lcm hook`` against whatever listens on the daemon's port: an impostor, a relay, a trickling or flooding
server, and a daemon whose answer nobody reads any more. The hook sends nothing to a peer that did not prove
it is this home's daemon, keeps its total time budget and its memory, and always exits 0 without a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lcm_framework.daemon_client.files import ensure_token
from lcm_framework.outbox import Outbox, outbox_path
from tests.conftest import OFFLINE_ENV
from tests.daemon.support import DaemonProcess, FakeListener, free_port

PROMPT = "deploy with the key hunter2-SECRET-PROMPT"
BUDGET_S = 2.0  # the hook's default budget for UserPromptSubmit and Stop
SLACK_S = 4.0  # start-up and the outbox fallback on a loaded machine


def hook_env(home: Path, port: int) -> dict[str, str]:
    return {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": str(port),
            "LCM_DAEMON_AUTOSTART": "false"}


def payload(tmp_path: Path, event: str) -> bytes:
    body = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
            "hook_event_name": event, "prompt": PROMPT}
    return json.dumps(body).encode()


def run_hook(event: str, stdin: bytes, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", event], input=stdin, env=env,
                          capture_output=True, timeout=120)
    return done, time.monotonic() - started


def assert_clean(done: subprocess.CompletedProcess[bytes]) -> None:
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr and b"Exception ignored" not in done.stderr, done.stderr
    assert all(line.startswith(b"lcm: warning: ") for line in done.stderr.splitlines()), done.stderr


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop"])
def test_an_impostor_on_the_port_gets_neither_the_token_nor_the_prompt(lcm_env: Path, tmp_path: Path,
                                                                       event: str) -> None:
    token = ensure_token(lcm_env)
    with FakeListener("impostor") as fake:
        done, _ = run_hook(event, payload(tmp_path, event), hook_env(lcm_env, fake.port))
    assert_clean(done)
    assert fake.received.startswith(b"GET /health?challenge=")  # it was asked to prove itself...
    assert token.encode() not in fake.received and b"authorization" not in fake.received.lower()
    assert b"hunter2" not in fake.received and b"/hook" not in fake.received  # ...and got nothing else
    assert b"did not prove it is this LCM_HOME's daemon" in done.stderr
    with Outbox(outbox_path(lcm_env)) as box:  # the event waits for the real daemon
        (kept,) = box.events()
    assert kept.event == event and "prompt" not in kept.payload


def test_a_relay_to_the_real_daemon_on_another_port_gets_nothing(tmp_path: Path) -> None:
    """The daemon's proof names the port it was reached on: a process relaying the challenge to the real
    daemon (started on another port) cannot pass its answer off as its own."""
    home = tmp_path / "home" / ".lcm"
    daemon = DaemonProcess(home, free_port()).start()
    try:
        with FakeListener("relay", target=daemon.port) as relay:
            done, _ = run_hook("UserPromptSubmit", payload(tmp_path, "UserPromptSubmit"), hook_env(home, relay.port))
    finally:
        daemon.stop()
    assert_clean(done)
    assert relay.received.startswith(b"GET /health?challenge=")
    assert daemon.token.encode() not in relay.received and b"hunter2" not in relay.received
    assert b"did not prove" in done.stderr


@pytest.mark.parametrize("proven", [False, True], ids=["impostor", "slow-daemon"])
def test_a_trickling_listener_cannot_hold_the_hook_past_its_budget(lcm_env: Path, tmp_path: Path,
                                                                   proven: bool) -> None:
    """One budget for the whole call, not one per read: a byte every 0.2 s never times a read out."""
    token = ensure_token(lcm_env)
    with FakeListener("trickle", token=token if proven else None, for_s=30) as fake:
        done, took = run_hook("UserPromptSubmit", payload(tmp_path, "UserPromptSubmit"),
                              hook_env(lcm_env, fake.port))
    assert_clean(done)
    assert took < BUDGET_S + SLACK_S, f"the hook took {took:.1f} s"
    assert b"within the time budget" in done.stderr


RSS_PROBE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), capture_output=True)
sys.stderr.buffer.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.parametrize("proven", [False, True], ids=["impostor", "broken-daemon"])
def test_a_flooding_listener_cannot_fill_the_hooks_memory(lcm_env: Path, tmp_path: Path, proven: bool) -> None:
    token = ensure_token(lcm_env)
    with FakeListener("flood", token=token if proven else None, flood_bytes=200 * 1024 * 1024) as fake:
        probe = subprocess.run([sys.executable, "-c", RSS_PROBE, sys.executable, "-m", "lcm_framework.cli.main",
                                "hook", "Stop"], input=payload(tmp_path, "Stop"), env=hook_env(lcm_env, fake.port),
                               capture_output=True, timeout=120)
    max_rss_mb = int(probe.stdout) / 1024
    assert max_rss_mb < 150, f"the hook grew to {max_rss_mb:.0f} MB"
    assert fake.sent < 64 * 1024 * 1024  # it stopped reading soon after its cap (8 MiB)
    assert probe.returncode == 0 and b"Traceback" not in probe.stderr, probe.stderr
    assert b"answer larger than" in probe.stderr


@pytest.mark.parametrize("stdin", [
    b"[" * 100_000,
    b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
    b'{"session_id": "s1", "cwd": "/tmp", "prompt": "deploy \\ud800 now"}',
    b'{"session_id": "\\udfff", "transcript_path": "/tmp/\\ud800.jsonl", "cwd": "/tmp", "prompt": "hi"}',
    b'{"session_id": "s1", "cwd": "/tmp", "model": "\\ud83d", "turn_id": 123456789012345678901234567890}',
], ids=["nested-list", "nested-object", "surrogate-prompt", "surrogate-ids", "surrogate-extra"])
def test_nested_or_invalid_unicode_stdin_exits_0_with_a_one_line_note(lcm_env: Path, stdin: bytes) -> None:
    ensure_token(lcm_env)  # a daemon ran once: the hook goes as far as calling it (it is down now)
    done, _ = run_hook("UserPromptSubmit", stdin, hook_env(lcm_env, free_port()))
    assert_clean(done)
    assert done.stderr.strip(), "a note says what was ignored or repaired"


def test_an_output_pipe_closed_early_costs_a_warning_not_a_traceback(lcm_env: Path, tmp_path: Path) -> None:
    token = ensure_token(lcm_env)
    answer = json.dumps({"recall": {"context": "LCM memory: deploys go through bg_deploy.sh"}}).encode()
    with FakeListener("answer", token=token, answer=answer) as daemon:
        proc = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", "hook", "UserPromptSubmit"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=hook_env(lcm_env, daemon.port))
        assert proc.stdout is not None
        proc.stdout.close()  # the agent stopped reading before the hook wrote its context
        _, stderr = proc.communicate(payload(tmp_path, "UserPromptSubmit"), timeout=60)
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr and b"Exception ignored" not in stderr, stderr
    assert b"closed the hook's output early" in stderr
