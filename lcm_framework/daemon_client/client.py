"""A small HTTP/1.1 client of the daemon on a plain socket (the hook fast path imports only this).

``http.client`` drags in the ``email`` package (~40 ms of start-up); the
daemon only ever answers JSON with a Content-Length, so a socket suffices.

Every request first has the daemon prove it holds this ``LCM_HOME``'s token
(``handshake``); the token and the body follow on the same connection only
then. One time budget covers connecting, the proof and the answer, and an
answer larger than ``max_response_bytes`` is refused: whatever listens on the
port can neither hold a hook past its budget nor fill its memory.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from .files import read_token
from .handshake import new_challenge, verify

HOST = "127.0.0.1"
MAX_RESPONSE_BYTES = 8 * 1024 * 1024


class DaemonUnavailable(Exception):
    """The daemon did not answer (refused, timed out, or no token yet)."""


class DaemonNotProven(DaemonUnavailable):
    """Something answers on the port but did not prove it is this ``LCM_HOME``'s daemon: nothing was sent to it."""


class DaemonRequestError(Exception):
    """The daemon answered with an error status; ``status`` and ``code`` say which."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status = status
        self.code = code
        super().__init__(f"daemon answered {status} ({code}): {message}")


class BadAnswer(ValueError):
    """What came back is not an HTTP answer this client accepts (malformed, truncated or too large)."""


class DaemonClient:
    """Talks to the daemon on 127.0.0.1:``port`` (plain class: no dataclasses import on the hook path).

    ``timeout_s`` bounds each request as a whole; ``home`` (``for_home``) lets a client made before the
    daemon's first start read the token once it exists."""

    __slots__ = ("home", "max_response_bytes", "port", "timeout_s", "token")

    def __init__(self, port: int, token: str | None, timeout_s: float = 2.0, *, home: Path | None = None,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        self.port = port
        self.token = token
        self.timeout_s = timeout_s
        self.home = home
        self.max_response_bytes = max_response_bytes

    @classmethod
    def for_home(cls, home: Path, port: int, *, timeout_s: float = 2.0) -> DaemonClient:
        return cls(port=port, token=read_token(home), timeout_s=timeout_s, home=home)

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/health")

    def alive(self) -> bool:
        """Whether this home's daemon answers (and proves it is that daemon)."""
        try:
            self.health()
        except (DaemonUnavailable, DaemonRequestError):
            return False
        return True

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        token = self._token()
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        deadline = time.monotonic() + self.timeout_s
        try:
            with _Connection(self.port, deadline, self.max_response_bytes) as conn:
                challenge = new_challenge()
                final = method == "GET" and path == "/health"
                status, raw = conn.exchange("GET", f"/health?challenge={challenge}", {}, None, keep_alive=not final)
                answer = _json(raw)
                if status != 200 or not verify(token, self.port, challenge, answer.get("proof")):
                    raise DaemonNotProven(
                        f"the process on {HOST}:{self.port} did not prove it is this LCM_HOME's daemon; nothing "
                        "was sent to it (a daemon of an older LCM answers so too: `lcm daemon restart`)")
                if not final:
                    headers = {"Accept": "application/json", "Authorization": f"Bearer {token}"}
                    if data is not None:
                        headers["Content-Type"] = "application/json"
                    status, raw = conn.exchange(method, path, headers, data, keep_alive=False)
                    answer = _json(raw)
        except DaemonUnavailable:
            raise
        except TimeoutError:
            raise DaemonUnavailable(f"daemon on {HOST}:{self.port} unreachable: no complete answer within the "
                                    f"time budget ({self.timeout_s:g} s)") from None
        except BadAnswer as exc:
            raise DaemonUnavailable(f"daemon on {HOST}:{self.port} unreachable: {exc}") from None
        except OSError as exc:
            raise DaemonUnavailable(f"daemon on {HOST}:{self.port} unreachable: {type(exc).__name__}") from None
        if status >= 400:
            raise DaemonRequestError(status, str(answer.get("error", "error")), str(answer.get("message", "")))
        return answer

    def _token(self) -> str:
        if self.token is None and self.home is not None:
            self.token = read_token(self.home)
        if not self.token:
            raise DaemonUnavailable("no daemon token yet (the daemon has never started)")
        return self.token


def _json(raw: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        return {"error": "bad_response", "message": raw[:200].decode("utf-8", "replace")}
    return payload if isinstance(payload, dict) else {"result": payload}


class _Connection:
    """One connection to ``HOST:port`` whose every step must finish before ``deadline`` (monotonic) and
    which receives at most ``limit`` bytes in all."""

    def __init__(self, port: int, deadline: float, limit: int) -> None:
        self.port = port
        self.deadline = deadline
        self.limit = limit
        self.received = 0
        self.buffer = bytearray()
        self.sock = socket.create_connection((HOST, port), timeout=self._remaining())

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.sock.close()

    def _remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the time budget is spent")
        return left

    def exchange(self, method: str, target: str, headers: dict[str, str], data: bytes | None, *,
                 keep_alive: bool) -> tuple[int, bytes]:
        """Send one request and read its answer: ``(status, body)``."""
        head = [f"{method} {target} HTTP/1.1", f"Host: {HOST}:{self.port}",
                f"Connection: {'keep-alive' if keep_alive else 'close'}", f"Content-Length: {len(data or b'')}",
                *(f"{k}: {v}" for k, v in headers.items())]
        self.sock.settimeout(self._remaining())
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data or b""))
        return self._answer(until_eof=not keep_alive)

    def _recv(self) -> bytes:
        self.sock.settimeout(self._remaining())
        chunk = self.sock.recv(65536)
        self.received += len(chunk)
        if self.received > self.limit:
            raise BadAnswer(f"answer larger than {self.limit} bytes")
        return chunk

    def _answer(self, *, until_eof: bool) -> tuple[int, bytes]:
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            chunk = self._recv()
            if not chunk:
                raise BadAnswer("incomplete HTTP answer")
            self.buffer += chunk
        lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        del self.buffer[:end + 4]
        try:
            status = int(lines[0].split()[1])
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
            length = int(fields["content-length"]) if "content-length" in fields else None
        except (IndexError, ValueError):
            raise BadAnswer("malformed HTTP answer") from None
        if length is None and not until_eof:
            raise BadAnswer("HTTP answer without Content-Length")
        if length is not None and not 0 <= length <= self.limit:
            raise BadAnswer(f"answer larger than {self.limit} bytes")
        while length is None or len(self.buffer) < length:
            chunk = self._recv()
            if not chunk:
                if length is not None:
                    raise BadAnswer("truncated HTTP answer")
                break
            self.buffer += chunk
        size = len(self.buffer) if length is None else length
        body = bytes(self.buffer[:size])
        del self.buffer[:size]
        return status, body
