"""The daemon against hostile requests over real HTTP: bodies no storage can hold, slow clients, web pages
(Host and Origin), transcripts that are no regular file, and the handshake that proves it is the daemon."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lcm_framework.daemon_client.handshake import new_challenge, proof
from lcm_framework.outbox import Outbox, outbox_path
from tests.daemon.support import DaemonProcess, free_port

TIMEOUT_S = 1.0  # daemon.request_timeout_s of these daemons
SLACK_S = 4.0  # a loaded machine
NESTED = b'{"project": "/tmp", "session_id": "s", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
SURROGATE = b'{"project": "/tmp", "session_id": "\\ud800"}'


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(tmp_path_factory.mktemp("hostile") / ".lcm", free_port(),
                         env={"LCM_DAEMON_REQUEST_TIMEOUT_S": str(TIMEOUT_S)}).start()
    try:
        yield proc
    finally:
        proc.stop()


def auth(daemon: DaemonProcess) -> dict[str, str]:
    return {"Authorization": f"Bearer {daemon.token}"}


@pytest.mark.parametrize("route", ["/context", "/hook", "/memory", "/grep", "/ingest"])
@pytest.mark.parametrize("body", [NESTED, SURROGATE, b'{"event": "Stop", "payload": {"cwd": "/tmp\\udfff"}}'],
                         ids=["nested", "surrogate", "surrogate-deep"])
def test_bodies_no_storage_can_hold_get_400_and_leave_no_traceback(daemon: DaemonProcess, route: str,
                                                                   body: bytes) -> None:
    answer = httpx.post(f"{daemon.url}{route}", content=body, headers=auth(daemon))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "bad_request"
    assert "nested deeper" in answer.json()["message"] or "lone surrogate" in answer.json()["message"]
    assert "Traceback" not in (daemon.home / "daemon.log").read_text()


def test_the_daemon_proves_it_holds_the_token_for_the_port_it_was_reached_on(daemon: DaemonProcess) -> None:
    challenge = new_challenge()
    answer = httpx.get(f"{daemon.url}/health", params={"challenge": challenge})
    assert answer.status_code == 200
    assert answer.json()["proof"] == proof(daemon.token, daemon.port, challenge)
    assert answer.json()["proof"] != proof(daemon.token, daemon.port + 1, challenge)
    for bad in ("short", "g" * 32, "A" * 32, "0" * 129):
        refused = httpx.get(f"{daemon.url}/health", params={"challenge": bad})
        assert refused.status_code == 400 and "challenge" in refused.json()["message"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST:{port}", "127.0.0.1:{port}"])
def test_loopback_hosts_are_served(daemon: DaemonProcess, host: str) -> None:
    answer = httpx.get(f"{daemon.url}/status", headers={**auth(daemon), "Host": host.format(port=daemon.port)})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("path", ["/health", "/status"])
@pytest.mark.parametrize("headers", [{"Host": "evil.example"}, {"Host": "evil.example:{port}"},
                                     {"Host": "127.0.0.1:1"}, {"Host": "127.0.0.1.evil.example"},
                                     {"Origin": "http://evil.example"}, {"Origin": "null"}],
                         ids=["host", "host-port", "wrong-port", "host-suffix", "origin", "origin-null"])
def test_web_pages_are_refused_even_with_dns_rebinding(daemon: DaemonProcess, path: str,
                                                       headers: dict[str, str]) -> None:
    """A page of a rebound domain reaches 127.0.0.1 with its own name as Host; a page's script sends Origin."""
    sent = {**auth(daemon), **{k: v.format(port=daemon.port) for k, v in headers.items()}}
    answer = httpx.get(f"{daemon.url}{path}", headers=sent)
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"] in ("forbidden_host", "forbidden_origin")
    assert "pid" not in answer.json()


def closed_within(sock: socket.socket, seconds: float, *, trickle: bytes = b"") -> tuple[float | None, bytes]:
    """Seconds until the peer closes ``sock`` (None: still open after ``seconds``) and what it sent, sending
    ``trickle`` a byte every 0.1 s meanwhile."""
    started = time.monotonic()
    sock.settimeout(0.1)
    sent, received = 0, b""
    while time.monotonic() - started < seconds:
        try:
            chunk = sock.recv(65536)
            if chunk == b"":
                return time.monotonic() - started, received
            received += chunk
        except TimeoutError:
            pass
        except ConnectionError:
            return time.monotonic() - started, received
        if sent < len(trickle):
            try:
                sock.sendall(trickle[sent:sent + 1])
            except ConnectionError:
                return time.monotonic() - started, received
            sent += 1
    return None, received


@pytest.mark.parametrize("trickle", [b"", b"POST /context HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200],
                         ids=["silent", "slow-headers"])
def test_a_slow_client_is_closed_after_the_request_timeout(daemon: DaemonProcess, trickle: bytes) -> None:
    with socket.create_connection(("127.0.0.1", daemon.port)) as sock:
        took, _ = closed_within(sock, TIMEOUT_S + SLACK_S + 3, trickle=trickle)
    assert took is not None, "the daemon kept the slow connection open"
    assert TIMEOUT_S * 0.5 <= took < TIMEOUT_S + SLACK_S


def test_a_slow_body_gets_408_then_the_connection_is_closed(daemon: DaemonProcess) -> None:
    head = (f"POST /context HTTP/1.1\r\nHost: 127.0.0.1:{daemon.port}\r\nAuthorization: Bearer {daemon.token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", daemon.port)) as sock:
        sock.sendall(head + b'{"project": ')
        took, answer = closed_within(sock, TIMEOUT_S + SLACK_S + 3)
    assert answer.startswith(b"HTTP/1.1 408") and b"request_timeout" in answer, answer
    assert took is not None, "the daemon kept the slow connection open"
    assert took < TIMEOUT_S + SLACK_S


def test_an_oversized_header_block_is_refused(daemon: DaemonProcess) -> None:
    head = (f"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {daemon.token}\r\n"
            f"X-Big: {'a' * 1024 * 1024}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", daemon.port)) as sock:
        try:
            sock.sendall(head)
        except ConnectionError:
            return  # closed before it all arrived: refused too
        took, answer = closed_within(sock, TIMEOUT_S + SLACK_S)
    assert took is not None and answer.startswith(b"HTTP/1.1 400"), answer


def test_a_connection_that_is_busy_is_not_cut_by_the_timeout(daemon: DaemonProcess) -> None:
    """The deadline is on sending a request, not on the connection: keep-alive requests slower in total than
    the timeout are served, each sent promptly."""
    with httpx.Client(headers=auth(daemon)) as client:
        for _ in range(3):
            assert client.get(f"{daemon.url}/status").status_code == 200
            time.sleep(TIMEOUT_S * 0.6)


def test_transcripts_that_are_no_regular_file_are_refused_for_good(tmp_path: Path) -> None:
    """A directory, a FIFO and /dev/zero as transcript_path: each event kept while the daemon was down is
    given up at its first attempt with the reason ``not_regular``, without opening the FIFO or the device
    (reading either would block or never end)."""
    home = tmp_path / "home" / ".lcm"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    targets = {"directory": project, "fifo": fifo, "device": Path("/dev/zero")}
    with Outbox(outbox_path(home)) as box:
        for name, path in targets.items():
            box.capture("Stop", {"session_id": name, "transcript_path": str(path), "cwd": str(project)})
    daemon = DaemonProcess(home, free_port()).start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with Outbox(outbox_path(home)) as box:
                events = box.events()
            if all(e.processed_at is not None for e in events):
                break
            time.sleep(0.1)
        for path in targets.values():  # the routes say the same, at once
            answer = httpx.post(f"{daemon.url}/ingest", headers=auth(daemon),
                                json={"project": str(project), "path": str(path)}, timeout=10)
            assert (answer.status_code, answer.json()["error"]) == (422, "not_regular"), answer.text
        time.sleep(2.5)  # past the consumer's next round: nothing is retried
        with Outbox(outbox_path(home)) as box:
            events = box.events()
    finally:
        daemon.stop()
    assert [(e.payload["session_id"], e.attempts, e.last_error) for e in events] == [
        (name, 0, "not_regular") for name in targets]
    assert all(e.processed_at is not None for e in events)
