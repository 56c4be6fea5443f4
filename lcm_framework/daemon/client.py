"""A small HTTP client of the daemon on ``http.client`` (the hook fast path imports only this)."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class DaemonClient:
    port: int
    token: str | None
    timeout_s: float = 2.0

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
        conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout_s)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            raise DaemonUnavailable(f"daemon on {HOST}:{self.port} unreachable: {type(exc).__name__}") from None
        finally:
            conn.close()
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            payload = {"error": "bad_response", "message": raw[:200].decode("utf-8", "replace")}
        if response.status >= 400:
            raise DaemonRequestError(
                response.status, str(payload.get("error", "error")), str(payload.get("message", ""))
            )
        return payload if isinstance(payload, dict) else {"result": payload}
