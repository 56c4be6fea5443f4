"""Build the daemon's ASGI app (auth, error mapping, lifespan) and serve it with uvicorn."""

from __future__ import annotations

import hmac
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..daemon_client.files import ensure_token, log_path, pid_path
from ..daemon_client.lifecycle import another_daemon
from ..errors import (
    ConfigError,
    ConflictError,
    DataValidationError,
    LcmError,
    NotFoundError,
    StorageError,
    StorageUnavailableError,
    TranscriptError,
    UnsupportedCapabilityError,
)
from ..recall.refs import RecallNotFoundError
from ..safe_paths import atomic_write_private, ensure_private_dir
from .bodies import BadRequest
from .routes import routes
from .service import DaemonService

if TYPE_CHECKING:
    from ..config import Config
    from ..kernel.plugins import Plugins

log = logging.getLogger("lcm.daemon")
OPEN_PATHS = frozenset({"/health"})
LOG_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_REQUEST_TIMEOUT_S = 10.0


class Guard:
    """Every request needs a ``Host`` naming the loopback (``127.0.0.1`` or ``localhost``, bare or with the
    port it reached) and no ``Origin``: browsers send one and LCM's clients never do, so a web page, DNS
    rebinding included, gets 403. Every path but ``/health`` then needs ``Authorization: Bearer <token>``
    (constant-time compare)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.refusal(scope)
            if refusal is not None:
                status, code, message = refusal
                headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
                await JSONResponse({"error": code, "message": message}, status_code=status,
                                   headers=headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        headers = dict(scope.get("headers") or [])
        server = scope.get("server")
        if not loopback_host(headers.get(b"host"), server[1] if server else None):
            return 403, "forbidden_host", "the Host header must be 127.0.0.1 or localhost (with this port)"
        if b"origin" in headers:
            return 403, "forbidden_origin", "requests from web pages (with an Origin header) are refused"
        if scope["path"] not in OPEN_PATHS and not hmac.compare_digest(headers.get(b"authorization", b""),
                                                                       self.expected):
            return 401, "unauthorized", "missing or wrong bearer token"
        return None


def loopback_host(value: bytes | None, port: int | None) -> bool:
    """Whether a ``Host`` header names this daemon: ``127.0.0.1`` or ``localhost``, bare or with ``port``."""
    if value is None:
        return False
    name, sep, given = value.decode("latin-1").lower().partition(":")
    return name in ("127.0.0.1", "localhost") and (not sep or given == str(port))


def error_status(exc: BaseException) -> tuple[int, str]:
    """HTTP status and code of an error; messages of LcmError are already sanitized."""
    table: tuple[tuple[type[BaseException], int], ...] = (
        (BadRequest, 400), (DataValidationError, 400), (ConfigError, 400), (NotFoundError, 404),
        (RecallNotFoundError, 404), (ConflictError, 409), (TranscriptError, 422), (UnsupportedCapabilityError, 501),
        (StorageUnavailableError, 503), (StorageError, 500), (LcmError, 500),
    )
    if isinstance(exc, LcmError) and not isinstance(exc, StorageError) and exc.exit_code == 2:
        return 400, str(getattr(exc, "code", None) or type(exc).__name__)  # usage errors (bad tool arguments)
    for kind, status in table:
        if isinstance(exc, kind):
            if isinstance(exc, BadRequest):
                return exc.status, exc.code
            return status, str(getattr(exc, "code", None) or type(exc).__name__)
    return 500, "internal_error"


async def _on_error(request: Request, exc: Exception) -> JSONResponse:
    status, code = error_status(exc)
    if isinstance(exc, BadRequest | LcmError):
        message = str(exc)
    else:
        log.exception("unexpected error on %s", request.url.path)
        message = "internal error (details in the daemon log)"
    return JSONResponse({"error": code, "message": message}, status_code=status)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    status = int(getattr(exc, "status_code", 500))
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
    return JSONResponse({"error": code, "message": str(getattr(exc, "detail", "")) or code}, status_code=status)


def build_app(service: DaemonService, token: str, *, consume_outbox: bool = True,
              request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S) -> ASGIApp:
    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if consume_outbox:
            service.start_consumer()
        try:
            yield
        finally:
            await service.close()

    app = Starlette(routes=list(routes()), lifespan=lifespan,
                    exception_handlers={Exception: _on_error, BadRequest: _on_error, LcmError: _on_error,
                                        HTTPException: _on_http_error})
    app.state.service = service
    app.state.token = token
    app.state.request_timeout_s = request_timeout_s
    return Guard(app, token)


LISTEN_BACKLOG = 2048
"""uvicorn's default: the server listens again with it when it starts serving the socket."""


def bind_loopback(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` (0: any free port). It listens before it is returned, so
    an address announced as soon as it is bound already accepts connections: they wait in the backlog
    until the server's loop starts (a connection before ``listen`` would be refused)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise LcmError(f"cannot listen on 127.0.0.1:{port}: {reason} (is a daemon already running?)") from None
    sock.set_inheritable(True)
    return sock


def serve(config: Config, plugins: Plugins, overrides: Mapping[str, Any] | None = None) -> int:
    """Run the daemon in this process until SIGTERM/SIGINT; writes and removes the pid file."""
    import uvicorn

    from .protocol import header_deadline_protocol

    home = config.home
    ensure_private_dir(home)
    token = ensure_token(home)
    from logging.handlers import RotatingFileHandler

    handler = RotatingFileHandler(log_path(home), maxBytes=LOG_MAX_BYTES, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    os.chmod(log_path(home), 0o600)
    port = int(config.get("daemon.port"))
    sock = bind_loopback(port)  # before the pid file: a second daemon on the same port exits here
    refusal = another_daemon(home, port)
    if refusal is not None:
        sock.close()
        raise LcmError(refusal)
    service = DaemonService(config, plugins, overrides)
    timeout_s = float(config.get("daemon.request_timeout_s"))
    server = uvicorn.Server(uvicorn.Config(
        build_app(service, token, request_timeout_s=timeout_s), host="127.0.0.1", port=port,
        http=header_deadline_protocol(timeout_s), log_level="warning", access_log=False,
        lifespan="on", timeout_graceful_shutdown=30, log_config=None,
    ))
    pid_file = pid_path(home)
    atomic_write_private(pid_file, f"{os.getpid()} {port}\n".encode(), home=home)  # 0600
    log.info("daemon %s listening on 127.0.0.1:%s", os.getpid(), port)
    for sig in (signal.SIGTERM, signal.SIGINT):
        # uvicorn re-raises the signal it shut down for once it is done; this no-op handler then
        # lets us remove the pid file and exit 0 instead of dying by that signal.
        signal.signal(sig, lambda *_: None)
    try:
        server.run(sockets=[sock])
    finally:
        try:
            if pid_file.read_text(encoding="utf-8").split()[0] == str(os.getpid()):
                pid_file.unlink()
        except (OSError, IndexError):
            pass
        log.info("daemon %s stopped", os.getpid())
    return 0 if server.started else 1
