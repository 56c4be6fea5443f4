"""``lcm hook`` never breaks the agent: bad input, no daemon, autostart, codex payloads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lcm_framework.daemon_client.files import ensure_token
from lcm_framework.outbox import Outbox, outbox_path, read_backlog
from tests.conftest import OFFLINE_ENV
from tests.daemon.support import free_port


def run_hook(*args: str, stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "hook", *args], input=stdin,
                          env=env, capture_output=True, timeout=60)


@pytest.fixture
def env(lcm_env: Path) -> dict[str, str]:
    return {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(free_port()),
            "LCM_DAEMON_AUTOSTART": "false"}


@pytest.mark.parametrize("stdin", [b"", b"{not json", b"[1,2]", b"\xff\xfe", b'{"session_id": 5}',
                                   b"{" + b'"x": "' + b"y" * (2 * 1024 * 1024) + b'"}'])
def test_bad_input_exits_0_with_a_warning_and_stores_nothing(stdin: bytes, env: dict[str, str],
                                                            lcm_env: Path) -> None:
    result = run_hook("Stop", stdin=stdin, env=env)
    assert result.returncode == 0
    assert b"lcm: warning:" in result.stderr and b"Traceback" not in result.stderr
    assert result.stdout == b""
    assert read_backlog(lcm_env) is None


def test_unknown_arguments_never_fail_the_agent(env: dict[str, str]) -> None:
    assert run_hook(stdin=b"{}", env=env).returncode == 0
    assert run_hook("Stop", "--agent", "other", stdin=b"{}", env=env).returncode == 0


def test_an_agent_name_that_is_no_name_is_refused_with_a_warning(env: dict[str, str], lcm_env: Path,
                                                                  tmp_path: Path) -> None:
    payload = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "transcript_path": str(tmp_path / "t.jsonl")})
    result = run_hook("Stop", "--agent", "../../etc", stdin=payload.encode(), env=env)
    assert result.returncode == 0 and b"--agent must be an agent name" in result.stderr
    assert read_backlog(lcm_env) is None
    assert run_hook("Stop", "--agent", "my-agent_2", stdin=payload.encode(), env=env).returncode == 0
    with Outbox(outbox_path(lcm_env)) as box:
        (event,) = box.events()
    assert event.payload["agent"] == "my-agent_2"  # any well-formed name: the fast path loads no plugin


def test_daemon_down_goes_to_the_outbox(env: dict[str, str], lcm_env: Path, tmp_path: Path) -> None:
    payload = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
               "hook_event_name": "Stop", "stop_hook_active": False, "extra_blob": "x" * 1000}
    result = run_hook("Stop", stdin=json.dumps(payload).encode(), env=env)  # hang guard: run_hook's timeout
    assert result.returncode == 0 and result.stdout == b""
    assert b"outbox" in result.stderr and b"Traceback" not in result.stderr
    with Outbox(outbox_path(lcm_env)) as box:
        (event,) = box.events()
    assert event.event == "Stop" and event.processed_at is None
    # no --agent on the command line (Claude Code's hooks): the event names no agent
    assert event.payload == {"session_id": "s1", "transcript_path": payload["transcript_path"],
                             "cwd": str(tmp_path), "project": str(tmp_path), "stop_hook_active": False}
    assert not (lcm_env / "daemon.pid").exists()  # autostart is off


def test_set_daemon_port_on_the_command_line_reaches_the_hook(env: dict[str, str], lcm_env: Path,
                                                               tmp_path: Path) -> None:
    """``lcm --set daemon.port=N hook EVENT`` (the full command line, not the agents' fast path) calls the
    daemon on N, not on the port the environment or the config files give."""
    port = free_port()
    ensure_token(lcm_env)  # a daemon ran once: the hook tries the port (it is down now)
    payload = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path)})
    result = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "--set", f"daemon.port={port}",
                             "hook", "Stop"], input=payload.encode(), env=env, capture_output=True, timeout=60)
    assert result.returncode == 0
    assert f"127.0.0.1:{port} unreachable".encode() in result.stderr, result.stderr
    assert not (lcm_env / "daemon.pid").exists()  # daemon.autostart = false still holds


def test_codex_payload_is_tagged(env: dict[str, str], lcm_env: Path, tmp_path: Path) -> None:
    payload = {"session_id": "019d036d", "transcript_path": None, "cwd": str(tmp_path),
               "hook_event_name": "Stop", "model": "gpt-5-codex", "turn_id": "019d036d-c7fa"}
    assert run_hook("Stop", "--agent", "codex", stdin=json.dumps(payload).encode(), env=env).returncode == 0
    with Outbox(outbox_path(lcm_env)) as box:
        (event,) = box.events()
    assert event.payload["agent"] == "codex" and event.payload["turn_id"] == "019d036d-c7fa"
    assert "transcript_path" not in event.payload


def test_daemon_down_with_autostart_starts_it_and_it_drains_the_outbox(env: dict[str, str], lcm_env: Path,
                                                                       tmp_path: Path) -> None:
    from lcm_framework.daemon_client.client import DaemonClient

    env = {**env, "LCM_DAEMON_AUTOSTART": "true", "LCM_DAEMON_TRANSCRIPT_WAIT_S": "0"}
    port = int(env["LCM_DAEMON_PORT"])
    missing = {"session_id": "s1", "transcript_path": str(tmp_path / "gone.jsonl"), "cwd": str(tmp_path)}
    result = run_hook("Stop", stdin=json.dumps(missing).encode(), env=env)
    assert result.returncode == 0
    client = DaemonClient.for_home(lcm_env, port, timeout_s=0.5)  # reads the token once the daemon made it
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and not client.alive():
            time.sleep(0.1)
        assert client.alive(), (lcm_env / "daemon.log").read_text()[-2000:]
        # The event names a transcript that does not exist past daemon.transcript_wait_s (0 here): a permanent
        # error, recorded and not retried.
        while time.monotonic() < deadline and read_backlog(lcm_env).pending:  # type: ignore[union-attr]
            time.sleep(0.1)
        with Outbox(outbox_path(lcm_env)) as box:
            (event,) = box.events()
        assert event.processed_at is not None and event.last_error
    finally:
        from lcm_framework.daemon_client.lifecycle import stop

        stop(lcm_env, port)


def test_stdin_left_open_does_not_hang_the_hook(env: dict[str, str], lcm_env: Path, tmp_path: Path) -> None:
    payload = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path)})
    proc = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", "hook", "Stop"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(payload.encode())
    proc.stdin.flush()  # ...and never closed, like a misbehaving agent
    try:
        assert proc.wait(20) == 0
        assert b"stdin not closed" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    with Outbox(outbox_path(lcm_env)) as box:
        assert [e.payload["session_id"] for e in box.events()] == ["s1"]
