"""The daemon's HTTP routes: JSON in, JSON out, same semantics as the CLI verbs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .. import __version__
from ..agent_hooks.events import EVENTS
from ..assembly.restore import SESSION_START_SUMMARIES, SESSION_START_TOKENS
from ..daemon_client.handshake import CHALLENGE, proof
from . import operations
from .bodies import MAX_BODY_BYTES, BadRequest, Field, parse_json_object, validate
from .hook_call import HookCall
from .service import DaemonService, regular_file

PROJECT = Field("project", Path, required=True)
SESSION = Field("session_id", str)

async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The body as a checked JSON object: at most ``limit`` bytes, received within the daemon's request
    timeout (a client trickling its body gets 408)."""
    import anyio

    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"request body larger than {limit} bytes", status=413, code="body_too_large")
    timeout_s: float = request.app.state.request_timeout_s
    chunks: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise BadRequest(f"request body larger than {limit} bytes", status=413, code="body_too_large")
                chunks.append(chunk)
    except TimeoutError:
        raise BadRequest(f"request body not received within {timeout_s:g} s", status=408,
                         code="request_timeout") from None
    return parse_json_object(b"".join(chunks))


def service_of(request: Request) -> DaemonService:
    found: DaemonService = request.app.state.service
    return found


async def health(request: Request) -> JSONResponse:
    """Open to anyone on the loopback; with ``?challenge=<hex>`` it adds the daemon's ``proof``
    (``handshake``) that it holds this home's token, bound to the port the connection reached."""
    answer: dict[str, Any] = {"ok": True, "service": "lcm", "version": __version__, "pid": os.getpid()}
    challenge = request.query_params.get("challenge")
    if challenge is not None:
        if not CHALLENGE.fullmatch(challenge):
            raise BadRequest("challenge must be 32 to 128 lower-case hexadecimal digits")
        server = request.scope.get("server")
        answer["proof"] = proof(request.app.state.token, int(server[1]) if server else 0, challenge)
    return JSONResponse(answer)


async def status(request: Request) -> JSONResponse:
    import anyio.to_thread

    # Reads the outbox file, so off the event loop; not counted as in-flight work itself.
    return JSONResponse(await anyio.to_thread.run_sync(service_of(request).status))


async def ingest(request: Request) -> JSONResponse:
    body = validate(await read_body(request), [
        PROJECT, SESSION, Field("path", Path, required=True), Field("format", str),
        Field("compact", str, default="incremental", choices=("none", "incremental", "full")),
        Field("wait", bool, default=False),
    ])
    mode = None if body["compact"] == "none" else body["compact"]
    result = await service_of(request).ingest(
        body["project"], body["path"], session_id=body["session_id"], format_id=body["format"],
        compact_mode=mode, wait=body["wait"],
    )
    return JSONResponse(result)


async def compact(request: Request) -> JSONResponse:
    body = validate(await read_body(request), [
        PROJECT, SESSION, Field("mode", str, default="full", choices=("incremental", "full")),
    ])
    return JSONResponse(await service_of(request).compact(body["project"], body["session_id"], mode=body["mode"]))


async def context(request: Request) -> JSONResponse:
    body = validate(await read_body(request), [
        PROJECT, Field("session_id", str, required=True), Field("budget_tokens", int, minimum=1),
    ])
    service = service_of(request)
    app = service.projects.app_for(body["project"])
    return JSONResponse(await service.projects.read(body["project"], operations.context, app, body["session_id"],
                                           budget_tokens=body["budget_tokens"]))


async def restore(request: Request) -> JSONResponse:
    body = validate(await read_body(request), [
        PROJECT, SESSION, Field("transcript_path", Path),
        Field("max_tokens", int, default=SESSION_START_TOKENS, minimum=1),
        Field("limit", int, default=SESSION_START_SUMMARIES, minimum=1),
    ])
    service = service_of(request)
    result: dict[str, Any] = {}
    if body["transcript_path"] is not None and await service.run(regular_file, body["transcript_path"]):
        result["reconciled"] = await service.ingest(
            body["project"], body["transcript_path"], session_id=body["session_id"], format_id=None,
            compact_mode=None, wait=False,
        )
    result.update(await service.restored(body["project"], body["session_id"], source=None,
                                         max_tokens=body["max_tokens"], limit=body["limit"]))
    return JSONResponse(result)


async def hook(request: Request) -> JSONResponse:
    body = validate(await read_body(request), [
        Field("event", str, required=True), Field("payload", dict, required=True), Field("wait", bool),
        Field("prompt", str),
    ])
    if body["event"] not in EVENTS:
        raise BadRequest(f"unknown hook event {body['event']!r} (known: {', '.join(sorted(EVENTS))})")
    service = service_of(request)
    call = HookCall.of(body["event"], body["payload"])
    if call.action.answers and call.action.action != "restore" and body["prompt"]:
        return JSONResponse(await prompt_hook(service, call, body["prompt"]))
    if call.action.action == "restore" or body["wait"]:
        result = await service.handle(call, wait=bool(body["wait"]))
        service.wake_consumer()  # the daemon is reachable again: drain what the outbox holds
        return JSONResponse(result)
    return JSONResponse(await service.enqueue(call), status_code=202)


async def prompt_hook(service: DaemonService, call: HookCall, prompt: str) -> dict[str, Any]:
    """UserPromptSubmit: queue the ingest as for any event, and answer with the recall for the prompt (which is
    never stored in the outbox)."""
    import asyncio

    recalling = asyncio.ensure_future(service.prompt_recall(call.project, prompt, call.session_id))
    try:
        queued = await service.enqueue(call)
    except BaseException:
        recalling.cancel()
        raise
    return {**queued, "recall": await recalling}


async def recall_route(request: Request) -> JSONResponse:
    """``{"project", "prompt", "session_id"?}``: what a prompt's recall injects (records the surfacing)."""
    body = validate(await read_body(request), [PROJECT, SESSION, Field("prompt", str, required=True)])
    return JSONResponse(await service_of(request).prompt_recall(body["project"], body["prompt"],
                                                                body["session_id"]))


async def stats(request: Request) -> JSONResponse:
    from ..operations import StatsRequest
    from ..operations import stats as counted

    body = validate(await read_body(request), [Field("project", Path)])
    service = service_of(request)
    app = service.projects.app_for(body["project"] or service.config.project_root)
    wanted = StatsRequest(project=str(body["project"].resolve()) if body["project"] is not None else None)
    return JSONResponse((await service.run(counted, app, wanted)).to_json())


async def capability_route(request: Request) -> JSONResponse:
    """``POST /<name>``: the registered capability ``lcm_<name>`` (or ``<name>``), with ``project`` and the
    capability's arguments, checked by its description as MCP checks them; ``{"result": ...}``."""
    from starlette.exceptions import HTTPException

    service = service_of(request)
    name = request.path_params["name"]
    found = service.plugins.capabilities()
    capability = found.get(f"lcm_{name}") or found.get(name)
    if capability is None:
        raise HTTPException(404, f"no route or capability {name!r}")
    body = await read_body(request)
    project = validate(body, [PROJECT], allow_extra=True)["project"]
    args = {k: v for k, v in body.items() if k != "project"}
    app = service.projects.app_for(project)
    return JSONResponse({"result": await service.run(operations.capability, app, capability, args)})


async def memory(request: Request) -> JSONResponse:
    """``{"project", "action", ...}``: one memory action (add, list, show, search, archive, revive, review,
    forget, feedback, stats) with the arguments of ``lcm memory``."""
    from ..memory import actions
    from ..operations import MemoryRequest

    body = await read_body(request)
    checked = validate(body, [PROJECT, Field("action", str, required=True, choices=tuple(actions.ACTIONS))],
                       allow_extra=True)
    wanted = MemoryRequest.from_fields(checked["action"],
                                       {k: v for k, v in body.items() if k not in ("project", "action")})
    service = service_of(request)
    app = service.projects.app_for(checked["project"])
    return JSONResponse(await service.run(operations.memory, app, wanted))


def routes() -> Sequence[Route]:
    """The daemon's own routes, then every registered capability (``capabilities.route``: ``lcm_grep`` at
    ``/grep``); a capability named like one of the daemon's routes is shadowed by it."""
    return [
        Route("/health", health, methods=["GET"]),
        Route("/status", status, methods=["GET", "POST"]),
        Route("/stats", stats, methods=["GET", "POST"]),
        Route("/ingest", ingest, methods=["POST"]),
        Route("/compact", compact, methods=["POST"]),
        Route("/context", context, methods=["POST"]),
        Route("/restore", restore, methods=["POST"]),
        Route("/hook", hook, methods=["POST"]),
        Route("/memory", memory, methods=["POST"]),
        Route("/recall", recall_route, methods=["POST"]),
        Route("/{name:str}", capability_route, methods=["POST"]),
    ]
