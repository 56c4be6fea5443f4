"""A small HTTP/1.1 client of the daemon on a plain socket (the hook fast path imports only this).

``http.client`` drags in the ``email`` package (~40 ms of start-up); the
daemon only ever answers JSON with a Content-Length, so a socket suffices.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from .files import read_token

HOST = "127.0.0.1"


class DaemonUnavailable(Exception):
    """The daemon did not answer (refused, timed out, or no token yet)."""


class DaemonRequestError(Exception):
    """The daemon answered with an error status; ``status`` and ``code`` say which."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status = status
        self.code = code
        super().__init__(f"daemon answered {status} ({code}): {message}")


class DaemonClient:
    """Talks to the daemon on 127.0.0.1:``port`` (plain class: no dataclasses import on the hook path)."""

    __slots__ = ("port", "timeout_s", "token")

    def __init__(self, port: int, token: str | None, timeout_s: float = 2.0) -> None:
        self.port = port
        self.token = token
        self.timeout_s = timeout_s

    @classmethod
    def for_home(cls, home: Path, port: int, *, timeout_s: float = 2.0) -> DaemonClient:
        return cls(port=port, token=read_token(home), timeout_s=timeout_s)

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/health")

    def alive(self) -> bool:
        try:
            self.health()
        except (DaemonUnavailable, DaemonRequestError):
            return False
        return True

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if path != "/health":
            if not self.token:
                raise DaemonUnavailable("no daemon token yet (the daemon has never started)")
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            status, raw = _exchange(self.port, method, path, headers, data, self.timeout_s)
        except (OSError, ValueError) as exc:
            raise DaemonUnavailable(f"daemon on {HOST}:{self.port} unreachable: {type(exc).__name__}") from None
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            payload = {"error": "bad_response", "message": raw[:200].decode("utf-8", "replace")}
        if status >= 400:
            raise DaemonRequestError(
                status, str(payload.get("error", "error")), str(payload.get("message", ""))
            )
        return payload if isinstance(payload, dict) else {"result": payload}


def _exchange(port: int, method: str, path: str, headers: dict[str, str], data: bytes | None,
              timeout_s: float) -> tuple[int, bytes]:
    """One request on a fresh connection (``Connection: close``); returns (status, body)."""
    head = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close",
            f"Content-Length: {len(data or b'')}", *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection((HOST, port), timeout=timeout_s) as sock:
        sock.settimeout(timeout_s)
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (data or b""))
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    response = b"".join(chunks)
    header, sep, body = response.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("incomplete HTTP response")
    lines = header.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = _unchunk(body)
    elif "content-length" in fields and len(body) < int(fields["content-length"]):
        raise ValueError("truncated HTTP response")
    return status, body


def _unchunk(body: bytes) -> bytes:
    out = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out.append(rest[:size])
        body = rest[size + 2:]
    return b"".join(out)
