"""Build the explorer's ASGI app and serve it on the loopback, one instance per ``LCM_HOME``."""

from __future__ import annotations

import fcntl
import logging
import os
import webbrowser
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp

from ..errors import LcmError, StorageUnavailableError
from ..recall.refs import RecallNotFoundError
from ..safe_paths import atomic_write_private, ensure_private_dir
from .auth import Guard, Sessions
from .pages import routes
from .render import error_page, wants_json
from .scopes import Scopes

if TYPE_CHECKING:
    from ..app import App

log = logging.getLogger("lcm.ui")
LOCK_FILE = "ui.lock"
PID_FILE = "ui.pid"
STATIC = Path(__file__).parent / "static"


def build_app(app: App, token: str, port: int) -> tuple[ASGIApp, Sessions]:
    """The guarded explorer for ``app``'s backend and the sessions holding its one-time login key."""
    scopes = Scopes(app)
    sessions = Sessions(token)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            scopes.close()

    starlette = Starlette(routes=routes(str(STATIC)), lifespan=lifespan,
                          exception_handlers={Exception: _on_error, HTTPException: _on_http_error})
    starlette.state.scopes = scopes
    starlette.state.sessions = sessions
    starlette.state.port = port
    return Guard(starlette, sessions, port), sessions


def _answer(request: Request, status: int, code: str, message: str) -> Response:
    if wants_json(request):
        return JSONResponse({"error": code, "message": message}, status_code=status)
    return HTMLResponse(error_page(status, message), status_code=status)


async def _on_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, RecallNotFoundError):
        return _answer(request, 404, "not_found", str(exc))
    if isinstance(exc, StorageUnavailableError):
        pid = request.path_params.get("pid")
        if pid:
            request.app.state.scopes.forget(pid)
        return _answer(request, 503, "storage_unavailable", str(exc))
    if isinstance(exc, LcmError):
        status = 400 if exc.exit_code == 2 else 500
        return _answer(request, status, str(getattr(exc, "code", None) or type(exc).__name__), str(exc))
    log.exception("unexpected error on %s", request.url.path)
    return _answer(request, 500, "internal_error", "internal error (details in the terminal running lcm ui)")


async def _on_http_error(request: Request, exc: Exception) -> Response:
    status = int(getattr(exc, "status_code", 500))
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
    return _answer(request, status, code, str(getattr(exc, "detail", "")) or code)


class AlreadyRunningError(LcmError):
    code = "ui_running"


def hold_instance(home: Path) -> IO[str]:
    """The lock of ``$LCM_HOME/ui.lock``, held while this process serves; ``AlreadyRunningError`` naming the
    running instance's port when another process holds it."""
    ensure_private_dir(home)
    handle = os.fdopen(os.open(home / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600), "r+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        try:
            running = (home / PID_FILE).read_text(encoding="utf-8").split()
        except OSError:
            running = []
        where = f" on http://127.0.0.1:{running[1]}/" if len(running) > 1 else ""
        raise AlreadyRunningError(f"lcm ui is already running for this LCM_HOME{where} (one instance per "
                                  "LCM_HOME; stop it first)") from None
    return handle


def serve(app: App, port: int, *, open_browser: bool, announce: Callable[[str], None]) -> int:
    """Serve until SIGINT/SIGTERM; ``announce`` gets the one-time login URL once the socket listens."""
    import uvicorn

    from ..daemon.server import bind_loopback
    from ..daemon_client.files import ensure_token

    home = Path(app.config.home)
    lock = hold_instance(home)
    try:
        sock = bind_loopback(port)
        bound = sock.getsockname()[1]
        asgi, sessions = build_app(app, ensure_token(home), bound)
        atomic_write_private(home / PID_FILE, f"{os.getpid()} {bound}\n".encode(), home=home)
        url = f"http://127.0.0.1:{bound}/login?key={sessions.login_key}"
        announce(url)
        if open_browser:
            webbrowser.open(url)
        server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", access_log=False, lifespan="on",
                                               log_config=None, timeout_graceful_shutdown=5))
        server.run(sockets=[sock])
        return 0 if server.started else 1
    finally:
        try:
            (home / PID_FILE).unlink()
        except OSError:
            pass
        lock.close()
