"""Who may use the explorer: a browser that opened the one-time login URL (a cookie after), or a client with the
daemon's bearer token; only through the loopback, never from another site.

Every request needs a ``Host`` naming the loopback with this port (DNS rebinding gets 403) and, when it has an
``Origin``, this very origin (another site gets 403). Every path but the login page and the static files then
needs the session cookie or ``Authorization: Bearer <daemon token>`` (401 otherwise), and every state-changing
request from a cookie session the session's CSRF token, as the ``csrf`` form field or the ``X-CSRF-Token``
header (403 otherwise). A bearer client sends no cookie, so a page elsewhere cannot ride on it.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from urllib.parse import parse_qs

from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..daemon.server import loopback_host

OPEN_PREFIXES = ("/login", "/static/")
SAFE_METHODS = frozenset({"GET", "HEAD"})
MAX_FORM_BYTES = 64 * 1024
SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # no-referrer would make Chromium send "Origin: null" on our own forms
    "cache-control": "no-store",
}


class Sessions:
    """The one-time login key, the browser sessions it opened and each session's CSRF token (in memory: a
    restarted ``lcm ui`` prints a new login URL)."""

    def __init__(self, token: str) -> None:
        self._token = token
        self._login_key: str | None = secrets.token_urlsafe(32)
        self._csrf: dict[str, str] = {}
        self._lock = threading.Lock()

    @property
    def login_key(self) -> str | None:
        return self._login_key

    def redeem(self, key: str | None) -> str | None:
        """A new session id for the login key (once: the key is then spent), else ``None``."""
        with self._lock:
            if key is None or self._login_key is None or not hmac.compare_digest(key, self._login_key):
                return None
            self._login_key = None
            return self._open()

    def open_with_token(self, token: str | None) -> str | None:
        """A new session id for a caller that gives the daemon's token (the login form), else ``None``."""
        if not self.token_matches(token):
            return None
        with self._lock:
            return self._open()

    def _open(self) -> str:
        session = secrets.token_urlsafe(32)
        self._csrf[session] = secrets.token_urlsafe(32)
        return session

    def token_matches(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token.encode(), self._token.encode())

    def csrf(self, session: str | None) -> str | None:
        return self._csrf.get(session) if session else None


def cookie_name(port: int) -> str:
    """Cookies are per host, not per port: each ``lcm ui`` names its own."""
    return f"lcm_ui_{port}"


class Guard:
    """The ASGI middleware that applies the rules of this module before any route runs."""

    def __init__(self, app: ASGIApp, sessions: Sessions, port: int) -> None:
        self.app = app
        self.sessions = sessions
        self.port = port
        self.origins = {f"http://127.0.0.1:{port}".encode(), f"http://localhost:{port}".encode()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        headers = dict(scope.get("headers") or [])
        path: str = scope["path"]
        wants_json = path.endswith(".json") or b"application/json" in headers.get(b"accept", b"")
        if not loopback_host(headers.get(b"host"), self.port):
            await _refuse(403, "forbidden_host", "the Host header must be 127.0.0.1 or localhost with this port",
                          wants_json)(scope, receive, send)
            return
        origin = headers.get(b"origin")
        if (origin is not None and origin not in self.origins) or headers.get(b"sec-fetch-site") == b"cross-site":
            await _refuse(403, "forbidden_origin", "requests from another site are refused",
                          wants_json)(scope, receive, send)
            return
        if path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        session = _cookie(headers.get(b"cookie", b""), cookie_name(self.port))
        csrf = self.sessions.csrf(session)
        bearer = _bearer(headers.get(b"authorization"))
        if csrf is None and not self.sessions.token_matches(bearer):
            await _refuse(401, "unauthorized", "open the login URL `lcm ui` printed, or send the daemon's bearer "
                          "token", wants_json)(scope, receive, send)
            return
        scope.setdefault("state", {})["csrf"] = csrf
        if scope["method"] in SAFE_METHODS or csrf is None:  # a bearer client: no cookie, nothing to forge
            await self.app(scope, receive, send)
            return
        body, receive = await _buffered(receive)
        if body is None:
            await _refuse(413, "body_too_large", f"request body larger than {MAX_FORM_BYTES} bytes",
                          wants_json)(scope, receive, send)
            return
        given = headers.get(b"x-csrf-token", b"").decode("latin-1") or _form_field(body, headers, "csrf")
        if not given or not hmac.compare_digest(given.encode(), csrf.encode()):
            await _refuse(403, "csrf", "this change needs the page's CSRF token (reload the page)",
                          wants_json)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", [])}
            extra = [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


def _refuse(status: int, code: str, message: str, wants_json: bool) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if wants_json:
        return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers)
    from .render import error_page

    return HTMLResponse(error_page(status, message), status_code=status, headers=headers)


def _cookie(header: bytes, name: str) -> str | None:
    for pair in header.decode("latin-1").split(";"):
        key, sep, value = pair.strip().partition("=")
        if sep and key == name:
            return value
    return None


def _bearer(header: bytes | None) -> str | None:
    if header is None:
        return None
    scheme, _, value = header.decode("latin-1").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _form_field(body: bytes, headers: dict[bytes, bytes], name: str) -> str:
    if not headers.get(b"content-type", b"").startswith(b"application/x-www-form-urlencoded"):
        return ""
    values = parse_qs(body.decode("latin-1"), keep_blank_values=True).get(name) or [""]
    return values[0]


async def _buffered(receive: Receive) -> tuple[bytes | None, Receive]:
    """The whole request body (``None`` past ``MAX_FORM_BYTES``) and a ``receive`` that replays it."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return None, receive
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay
