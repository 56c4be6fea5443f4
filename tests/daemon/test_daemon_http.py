"""The daemon process over real HTTP: auth, validation, limits, lifecycle."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import run_lcm
from tests.daemon.support import DaemonProcess, free_port


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon for this module's read-only checks (its own LCM_HOME)."""
    proc = DaemonProcess(tmp_path_factory.mktemp("daemon") / ".lcm", free_port()).start()
    try:
        yield proc
    finally:
        proc.stop()


def auth(daemon: DaemonProcess) -> dict[str, str]:
    return {"Authorization": f"Bearer {daemon.token}"}


def test_health_needs_no_token_and_token_file_is_private(daemon: DaemonProcess) -> None:
    answer = httpx.get(f"{daemon.url}/health")
    assert answer.status_code == 200 and answer.json()["ok"] is True
    assert stat.S_IMODE((daemon.home / "daemon.token").stat().st_mode) == 0o600
    assert len(daemon.token) >= 32


@pytest.mark.parametrize("path", ["/status", "/stats", "/ingest", "/compact", "/context", "/restore", "/grep",
                                  "/search", "/describe", "/expand", "/hook"])
def test_every_other_route_needs_the_token(daemon: DaemonProcess, path: str) -> None:
    assert httpx.post(f"{daemon.url}{path}", json={}).status_code == 401
    wrong = httpx.post(f"{daemon.url}{path}", json={}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "unauthorized"


@pytest.mark.parametrize(("body", "needle"), [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"session_id": "s"}', "missing required field 'project'"),
    (b'{"project": "relative/dir", "session_id": "s"}', "absolute path"),
    (b'{"project": "/tmp", "session_id": 5}', "must be of type str"),
    (b'{"project": "/tmp", "session_id": "s", "budget_tokens": "many"}', "must be an integer"),
    (b'{"project": "/tmp", "session_id": "s", "surprise": 1}', "unknown field"),
    (b'{"project": "/tmp", "session_id": "a\\u0000b"}', "U+0000"),
])
def test_bad_bodies_get_400_with_a_clear_message(daemon: DaemonProcess, body: bytes, needle: str) -> None:
    answer = httpx.post(f"{daemon.url}/context", content=body, headers=auth(daemon))
    assert answer.status_code == 400, answer.text
    assert needle in answer.json()["message"]
    assert "Traceback" not in answer.text


def test_unknown_hook_event_and_bad_ingest_mode_are_400(daemon: DaemonProcess) -> None:
    bad = httpx.post(f"{daemon.url}/hook", json={"event": "Nope", "payload": {}}, headers=auth(daemon))
    assert bad.status_code == 400 and "unknown hook event" in bad.json()["message"]
    mode = httpx.post(f"{daemon.url}/ingest", headers=auth(daemon),
                      json={"project": "/tmp", "path": "/tmp/x.jsonl", "compact": "sometimes"})
    assert mode.status_code == 400 and "must be one of" in mode.json()["message"]


def test_unknown_routes_and_methods_answer_json(daemon: DaemonProcess) -> None:
    missing = httpx.post(f"{daemon.url}/nope", json={}, headers=auth(daemon))
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = httpx.get(f"{daemon.url}/ingest", headers=auth(daemon))
    assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"


def test_body_size_limit(daemon: DaemonProcess) -> None:
    huge = b'{"project": "/tmp", "session_id": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    answer = httpx.post(f"{daemon.url}/context", content=huge, headers=auth(daemon))
    assert answer.status_code == 413
    assert answer.json()["error"] == "body_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is enforced while streaming
        yield b'{"project": "/tmp", "session_id": "'
        for _ in range(40):
            yield b"y" * 65536
        yield b'"}'

    streamed = httpx.post(f"{daemon.url}/context", content=chunks(), headers=auth(daemon))
    assert streamed.status_code == 413


@pytest.mark.parametrize("root", ["/", "/etc", "proj"])
def test_reads_of_a_project_lcm_does_not_hold_create_nothing(daemon: DaemonProcess, tmp_path: Path,
                                                              root: str) -> None:
    """Only writes create a project: a read route answers "no such project" (or nothing to restore or
    recall) and leaves no database behind, whatever path it names."""
    project = tmp_path / root if root == "proj" else Path(root)
    project.mkdir(exist_ok=True)
    before = sorted((daemon.home / "projects").glob("*")) if (daemon.home / "projects").exists() else []
    for path, body in (("/context", {"session_id": "nobody"}), ("/compact", {"session_id": "nobody"})):
        answer = httpx.post(f"{daemon.url}{path}", headers=auth(daemon), json={"project": str(project), **body})
        assert (answer.status_code, answer.json()["error"]) == (404, "no_such_project"), answer.text
    restored = httpx.post(f"{daemon.url}/restore", headers=auth(daemon),
                          json={"project": str(project), "session_id": "nobody"})
    assert restored.status_code == 200, restored.text
    assert restored.json()["context"] == ""
    recalled = httpx.post(f"{daemon.url}/recall", headers=auth(daemon),
                          json={"project": str(project), "prompt": "how do we deploy"})
    assert recalled.status_code == 200 and recalled.json()["items"] == []
    started = httpx.post(f"{daemon.url}/hook", headers=auth(daemon), json={
        "event": "SessionStart", "payload": {"session_id": "s", "project": str(project), "source": "startup"}})
    assert started.status_code == 200 and started.json()["restore"]["context"] == ""
    after = sorted((daemon.home / "projects").glob("*")) if (daemon.home / "projects").exists() else []
    assert after == before
    status = httpx.get(f"{daemon.url}/status", headers=auth(daemon)).json()
    assert status["pid"] == daemon.process.pid  # type: ignore[union-attr]


def test_binds_loopback_only(daemon: DaemonProcess) -> None:
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port = local.rsplit(":", 1)
            if int(port, 16) == daemon.port and state == "0A":  # LISTEN
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1 only, no IPv6 or wildcard socket


def test_cli_start_status_stop(lcm_env: Path) -> None:
    port = str(free_port())
    env = {"LCM_DAEMON_PORT": port}
    started = run_lcm("daemon", "start", env=env)
    try:
        assert started.returncode == 0, started.stderr
        pid = int((lcm_env / "daemon.pid").read_text().split()[0])
        status = run_lcm("daemon", "status", "--json", env=env)
        assert status.returncode == 0 and '"healthy": true' in status.stdout
        again = run_lcm("daemon", "start", env=env)  # already running: no second daemon
        assert again.returncode == 0 and f"pid {pid}" in again.stdout
        restarted = run_lcm("daemon", "restart", env=env)
        assert restarted.returncode == 0, restarted.stderr
        new_pid = int((lcm_env / "daemon.pid").read_text().split()[0])
        assert new_pid != pid and f"pid {new_pid}" in restarted.stdout
        pid = new_pid
    finally:
        stopped = run_lcm("daemon", "stop", env=env)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not (lcm_env / "daemon.pid").exists()
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    down = run_lcm("daemon", "status", env=env)
    assert down.returncode == 3 and "not running" in down.stdout


def test_second_daemon_on_same_port_fails_cleanly(daemon: DaemonProcess) -> None:
    other = run_lcm("daemon", "start", "--foreground",
                    env={"LCM_DAEMON_PORT": str(daemon.port), "LCM_HOME": str(daemon.home)})
    assert other.returncode != 0
    assert "cannot listen" in other.stderr and "Traceback" not in other.stderr
    assert int((daemon.home / "daemon.pid").read_text().split()[0]) == daemon.process.pid  # type: ignore[union-attr]


def test_reads_create_no_project_on_postgresql_either(tmp_path: Path) -> None:
    from tests.postgres.support import require_database

    database = require_database()
    with database.fresh_schema() as schema:
        env = {"LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_URL": database.url,
               "LCM_POSTGRESQL_ALLOW_PLAINTEXT_LOOPBACK": "true", "LCM_POSTGRESQL_SCHEMA": schema}
        proc = DaemonProcess(tmp_path / ".lcm", free_port(), env=env).start()
        try:
            for root in ("/", "/etc", str(tmp_path)):
                answer = httpx.post(f"{proc.url}/context", headers=auth(proc),
                                    json={"project": root, "session_id": "nobody"})
                assert (answer.status_code, answer.json()["error"]) == (404, "no_such_project"), answer.text
                recalled = httpx.post(f"{proc.url}/recall", headers=auth(proc), json={"project": root, "prompt": "x"})
                assert recalled.status_code == 200 and recalled.json()["items"] == []
            with database.connect() as conn:
                assert conn.execute(f'SELECT count(*) FROM "{schema}".projects').fetchone()[0] == 0
            added = httpx.post(f"{proc.url}/memory", headers=auth(proc), timeout=30, json={
                "project": str(tmp_path), "action": "add", "text": "Deploys go through the blue-green script"})
            assert added.status_code == 200, added.text  # a write creates the project
            with database.connect() as conn:
                assert conn.execute(f'SELECT count(*) FROM "{schema}".projects').fetchone()[0] == 1
        finally:
            proc.stop()
