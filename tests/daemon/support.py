"""Start and stop a real daemon process for tests (free port, the test's own LCM_HOME)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import OFFLINE_ENV


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DaemonProcess:
    """``lcm daemon start --foreground`` as a child process."""

    def __init__(self, home: Path, port: int, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.port = port
        self.env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": str(port), **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def token(self) -> str:
        return (self.home / "daemon.token").read_text().strip()

    def start(self, timeout: float = 20.0) -> DaemonProcess:
        import httpx

        self.process = subprocess.Popen(
            [sys.executable, "-m", "lcm_framework.cli.main", "daemon", "start", "--foreground"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{self.url}/health", timeout=0.5).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("daemon did not answer in time")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return self.process.returncode


class FakeListener:
    """A process other than the daemon on its port: a thread serving raw TCP that records every byte it
    receives (``received``) and answers as ``mode`` says.

    * ``impostor``: every request gets ``200 {"ok": true, "proof": <made up>}`` (the connection kept);
    * ``relay``: every connection is piped to the real daemon on ``target`` (a man in the middle);
    * ``trickle``: an answer sent one byte every ``interval_s`` for ``for_s`` seconds;
    * ``flood``: headers announcing a huge body, then body bytes as fast as the client takes them, up to
      ``flood_bytes`` (``sent`` counts what left);
    * ``answer``: ``answer`` as the JSON body.

    With ``token``, the first request (the client's challenge) gets the right proof first, as the daemon
    of that token would give: the listener is then a slow or broken daemon rather than an impostor.
    """

    def __init__(self, mode: str, *, token: str | None = None, target: int | None = None, interval_s: float = 0.2,
                 for_s: float = 20.0, flood_bytes: int = 200 * 1024 * 1024, answer: bytes = b"{}") -> None:
        import threading

        self.mode, self.token, self.target = mode, token, target
        self.interval_s, self.for_s, self.flood_bytes, self.answer = interval_s, for_s, flood_bytes, answer
        self.received = bytearray()
        self.sent = 0
        self._lock = threading.Lock()
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port = int(self._server.getsockname()[1])
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._spawn(self._accept)

    def __enter__(self) -> FakeListener:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._closed = True
        self._server.close()
        for thread in self._threads:
            thread.join(5)

    def _spawn(self, target: Callable[..., None], *args: object) -> None:
        import threading

        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        self._server.settimeout(0.1)  # a closed socket does not wake accept(): look at _closed now and then
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._spawn(self._serve, conn)

    def _record(self, data: bytes) -> None:
        with self._lock:
            self.received += data

    def _request(self, conn: socket.socket, pending: bytearray) -> bytes | None:
        """One request's bytes (headers and Content-Length body), or None when the client closed."""
        while b"\r\n\r\n" not in pending:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            self._record(chunk)
            pending += chunk
        head, _, rest = bytes(pending).partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            self._record(chunk)
            rest += chunk
        pending[:] = rest[length:]
        return head

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(30)
        try:
            if self.mode == "relay":
                self._relay(conn)
                return
            pending = bytearray()
            head = self._request(conn, pending)
            if head is None:
                return
            if self.token is not None:
                from lcm_framework.daemon_client.handshake import proof

                challenge = head.split(b" ")[1].partition(b"challenge=")[2].decode()
                body = json.dumps({"ok": True, "proof": proof(self.token, self.port, challenge)}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                if self._request(conn, pending) is None:
                    return
            getattr(self, f"_{self.mode}")(conn, pending)
        except OSError:
            pass
        finally:
            conn.close()

    def _impostor(self, conn: socket.socket, pending: bytearray) -> None:
        body = b'{"ok": true, "service": "lcm", "pid": 1, "proof": "' + b"0" * 64 + b'"}'
        while True:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            if self._request(conn, pending) is None:
                return

    def _answer(self, conn: socket.socket, pending: bytearray) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (len(self.answer), self.answer))

    def _trickle(self, conn: socket.socket, pending: bytearray) -> None:
        answer = b'HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{"ok": true, "pad": "' + b"x" * 100000
        deadline = time.monotonic() + self.for_s
        for byte in answer:
            if time.monotonic() > deadline or self._closed:
                return
            conn.sendall(bytes([byte]))
            time.sleep(self.interval_s)

    def _flood(self, conn: socket.socket, pending: bytearray) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n")
        chunk = b"x" * (1024 * 1024)
        while self.sent < self.flood_bytes and not self._closed:
            conn.sendall(chunk)
            self.sent += len(chunk)

    def _relay(self, conn: socket.socket) -> None:
        assert self.target is not None
        upstream = socket.create_connection(("127.0.0.1", self.target), timeout=30)

        def back() -> None:
            try:
                while chunk := upstream.recv(65536):
                    conn.sendall(chunk)
            except OSError:
                pass
            finally:
                conn.close()

        self._spawn(back)
        try:
            while chunk := conn.recv(65536):
                self._record(chunk)
                upstream.sendall(chunk)
        finally:
            upstream.close()
