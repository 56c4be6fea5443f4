"""The explorer's routes. Each page is also its JSON at the same path + ``.json``; ids in paths are checked
against their shape and looked up (an unknown or malformed id is 404); storage runs in worker threads."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..operations import browse
from ..operations.browse import BrowseNotFoundError
from . import views
from .auth import Sessions, cookie_name
from .render import fragment, respond, wants_json
from .scopes import Scopes

T = TypeVar("T")
SESSION_ID = re.compile(r"(?!.*\.\.)(?!.*//)[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}(?<!/)")
"""Session ids as formats write them: a sub-agent run's holds a ``/`` (``SESSION/agent-ID``), never ``..``."""
SUMMARY_ID = re.compile(r"sum_[0-9a-f]{1,64}")
MEMORY_ID = re.compile(r"mem_[0-9]{1,15}")
MESSAGE_ID = re.compile(r"[0-9]{1,15}")
MAX_BUDGET = 2_000_000


def scopes_of(request: Request) -> Scopes:
    found: Scopes = request.app.state.scopes
    return found


async def run(fn: Callable[..., T], *args: Any) -> T:
    return await anyio.to_thread.run_sync(lambda: fn(*args))


def checked(pattern: re.Pattern[str], value: str) -> str:
    if not pattern.fullmatch(value):
        raise BrowseNotFoundError("no such id")
    return value


def number(request: Request, name: str, default: int | None, *, low: int = 0, high: int = 2**53 - 1) -> int | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    if not text.isdigit():
        raise BrowseNotFoundError(f"{name} must be a whole number")
    return max(low, min(high, int(text)))


async def storage_of(request: Request) -> Any:
    return await run(scopes_of(request).storage, request.path_params["pid"])


async def index(request: Request) -> Response:
    return RedirectResponse("/projects", status_code=303)


async def projects(request: Request) -> Response:
    scopes = scopes_of(request)
    refs = await run(scopes.app.storage.list_projects)
    backend = scopes.app.storage.name
    rows = [await run(lambda ref=ref: browse.project_row(scopes.storage(ref.project_id), ref, backend,
                                                         scopes.usage(ref.project_id)))
            for ref in refs]
    return respond(request, "projects.html.j2", browse.by_activity(rows), pid=None)


async def sessions(request: Request) -> Response:
    pid = request.path_params["pid"]
    scopes = scopes_of(request)
    storage = await storage_of(request)
    page = number(request, "page", 1, low=1) or 1
    result = await run(lambda: browse.sessions(storage, scopes.ref(pid), page=page))
    return respond(request, "sessions.html.j2", result, pid=pid)


async def transcript(request: Request) -> Response:
    session = checked(SESSION_ID, request.path_params["session"])
    storage = await storage_of(request)
    after = number(request, "after", None)
    conversation = number(request, "c", None)
    limit = number(request, "limit", browse.PAGE_MESSAGES, low=1, high=browse.MAX_PAGE_MESSAGES) or 1
    result = await run(lambda: browse.transcript(storage, session, conversation_id=conversation, after_seq=after,
                                                 limit=limit))
    if request.query_params.get("fragment") == "1" and not wants_json(request):
        last = result.messages[-1].seq if result.messages else after
        html = fragment("_messages.html.j2", messages=result.messages, pid=result.project_id)
        return HTMLResponse(html, headers={"X-Last-Seq": "" if last is None else str(last),
                                           "X-More": "1" if result.next_after_seq is not None else "0"})
    return respond(request, "transcript.html.j2", result, pid=result.project_id)


async def message(request: Request) -> Response:
    pid = request.path_params["pid"]
    message_id = int(checked(MESSAGE_ID, request.path_params["mid"]))
    storage = await storage_of(request)
    session, conversation, after = await run(browse.message_location, storage, message_id)
    target = f"/p/{pid}/s/{quote(session, safe='')}?c={conversation}" + (f"&after={after}" if after is not None
                                                                        else "")
    if wants_json(request):
        return JSONResponse({"session_id": session, "conversation_id": conversation, "after_seq": after,
                             "url": target + f"#msg_{message_id}"})
    return RedirectResponse(target + f"#msg_{message_id}", status_code=303)


async def dag(request: Request) -> Response:
    session = checked(SESSION_ID, request.path_params["session"])
    storage = await storage_of(request)
    result = await run(browse.summary_dag, storage, session)
    return respond(request, "dag.html.j2", result, pid=result.project_id)


async def summary(request: Request) -> Response:
    summary_id = checked(SUMMARY_ID, request.path_params["sid"])
    storage = await storage_of(request)
    result = await run(browse.summary_detail, storage, summary_id)
    return respond(request, "summary.html.j2", result, pid=result.project_id)


async def context(request: Request) -> Response:
    pid = request.path_params["pid"]
    session = checked(SESSION_ID, request.path_params["session"])
    storage = await storage_of(request)
    app = await run(scopes_of(request).app_for, pid)
    budget = number(request, "budget", None, low=1, high=MAX_BUDGET)
    result = await run(views.context_preview, app, storage, session, budget)
    return respond(request, "context.html.j2", result, pid=pid)


async def start(request: Request) -> Response:
    pid = request.path_params["pid"]
    session = checked(SESSION_ID, request.path_params["session"])
    storage = await storage_of(request)
    app = await run(scopes_of(request).app_for, pid)
    result = await run(views.session_start, app, storage, session)
    return respond(request, "start.html.j2", result, pid=pid)


async def search(request: Request) -> Response:
    pid = request.path_params["pid"]
    await storage_of(request)  # 404 for a project the backend does not hold
    app = await run(scopes_of(request).app_for, pid)
    query = request.query_params.get("q", "")[:1000].replace("\x00", "")
    result = await run(views.search_page, app, query)
    return respond(request, "search.html.j2", result, pid=pid)


async def memories(request: Request) -> Response:
    pid = request.path_params["pid"]
    storage = await storage_of(request)
    app = await run(scopes_of(request).app_for, pid)
    result = await run(views.memories_page, app, storage, number(request, "page", 1, low=1) or 1)
    return respond(request, "memories.html.j2", result, pid=pid)


async def memory_action(request: Request) -> Response:
    pid = request.path_params["pid"]
    ref = checked(MEMORY_ID, request.path_params["mem"])
    action = request.path_params["action"]
    if action not in views.MEMORY_ACTIONS:
        raise BrowseNotFoundError("no such action")
    await storage_of(request)  # 404 for a project the backend does not hold
    app = await run(scopes_of(request).app_for, pid)
    result = await run(views.memory_action, app, action, ref)
    return _after_change(request, pid, result, f"#{ref}")


async def review(request: Request) -> Response:
    pid = request.path_params["pid"]
    await storage_of(request)
    app = await run(scopes_of(request).app_for, pid)
    result = await run(views.archive_stale, app)
    return _after_change(request, pid, result, "")


def _after_change(request: Request, pid: str, result: dict[str, Any], anchor: str) -> Response:
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse(result)
    return RedirectResponse(f"/p/{pid}/memories{anchor}", status_code=303)


async def health(request: Request) -> Response:
    scopes = scopes_of(request)
    refs = await run(scopes.app.storage.list_projects)
    result = await run(views.health_page, scopes.app, refs, scopes.storage, scopes.usage)
    return respond(request, "health.html.j2", result, pid=None)


async def login(request: Request) -> Response:
    """``GET /login?key=K``: the one-time key ``lcm ui`` printed; ``POST /login`` with ``token``: the daemon's
    bearer token (from ``$LCM_HOME/daemon.token``). Either sets the session cookie."""
    sessions: Sessions = request.app.state.sessions
    if request.method == "POST":
        form = await request.form()
        token = form.get("token")
        session = sessions.open_with_token(token if isinstance(token, str) else None)
    else:
        key = request.query_params.get("key")
        session = sessions.redeem(key) if key is not None else None
        if key is None:
            return respond(request, "login.html.j2", None, pid=None, failed=False)
    if session is None:
        response: Response = respond(request, "login.html.j2", None, pid=None, failed=True)
        response.status_code = 401
        return response
    response = RedirectResponse("/projects", status_code=303)
    response.set_cookie(cookie_name(request.app.state.port), session, httponly=True, samesite="strict", path="/")
    return response


def both(path: str, endpoint: Callable[[Request], Any], methods: list[str] | None = None) -> list[BaseRoute]:
    """The page and its JSON (``.json`` first: a path parameter would otherwise swallow the suffix)."""
    return [Route(path + ".json", endpoint, methods=methods), Route(path, endpoint, methods=methods)]


def routes(static_dir: str) -> list[BaseRoute]:
    return [
        Route("/", index),
        Route("/login", login, methods=["GET", "POST"]),
        Mount("/static", StaticFiles(directory=static_dir), name="static"),
        *both("/projects", projects),
        *both("/health", health),
        *both("/p/{pid}/sessions", sessions),
        *both("/p/{pid}/search", search),
        *both("/p/{pid}/memories", memories),
        Route("/p/{pid}/memories/review", review, methods=["POST"]),
        Route("/p/{pid}/memories/{mem}/{action}", memory_action, methods=["POST"]),
        *both("/p/{pid}/m/{mid}", message),
        *both("/p/{pid}/summary/{sid}", summary),
        *both("/p/{pid}/s/{session:path}/summaries", dag),
        *both("/p/{pid}/s/{session:path}/context", context),
        *both("/p/{pid}/s/{session:path}/start", start),
        *both("/p/{pid}/s/{session:path}", transcript),
    ]
