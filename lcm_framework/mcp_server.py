"""``lcm mcp``: the registered recall capabilities as MCP tools over stdio (newline-delimited JSON-RPC 2.0).

Agents start this server with every session and wait for it, so it is built
for start-up and shut-down time: ``lcm mcp`` takes a fast path in
``cli/main.py`` (no plugin manager before the first answer), ``initialize`` is
answered from constants while the plugins, configuration and storage load in a
background thread (``tools/list`` and ``tools/call`` wait for them), and the
process exits as soon as stdin closes or SIGINT/SIGTERM arrives, without
waiting for a tool call still running (the tools only read). It starts no
child process.

Tool arguments are checked against each capability's argument description
(``lcm_framework.kernel.arguments.call``: required keys, types, choices, bounds,
defaults) before the handler runs, as the daemon and CLI check them; a
violation is a tool error (``isError``). An ``LcmError`` of the handler is a tool error too, whose text
is JSON ``{"error", "code"}`` as the CLI and daemon report it; results are JSON text bounded to
``MAX_RESULT_CHARS``.

Hostile input gets an answer and leaves the session working: a frame is read
in bounded pieces and one longer than ``MAX_FRAME_BYTES`` is discarded as it
streams in (an ``invalid request`` error); a frame that is not UTF-8 JSON, or
nests deeper than the decoder allows, is a ``parse error``; an ``id`` that is
not a string or number, or ``params`` that are not an object, is refused; at
most ``MAX_PENDING_CALLS`` tool calls wait at once (the reader then waits,
so queued frames never pile up in memory). Every answer is encodable JSON: a
lone surrogate becomes U+FFFD and a non-finite number ``null``.
"""

from __future__ import annotations

import json
import math
import os
import re
import reprlib
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any

from . import __version__
from .errors import LcmError
from .kernel.arguments import ArgumentError, call

if TYPE_CHECKING:
    from pathlib import Path

    from .app import App

MAX_RESULT_CHARS = 400_000
MAX_FRAME_BYTES = 1 << 20
"""The longest frame (one JSON-RPC message or batch, without its newline) the server reads."""
MAX_PENDING_CALLS = 8
"""Tool calls running or queued at once; the reader waits for a free place before taking the next."""
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)
_SURROGATE = re.compile("[\ud800-\udfff]")
INSTRUCTIONS = (
    "LCM stores every message of this project's coding sessions losslessly and compacts old turns into "
    "summaries (ids sum_...). Use lcm_grep or lcm_search to find details, lcm_expand to open a summary down to "
    "the original messages, lcm_describe to read one summary, message (msg_N) or large file (file_...) in full. "
    "Use lcm_store to remember a durable insight for later sessions and lcm_feedback to say whether a surfaced "
    "memory (mem_N) helped."
)
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Server:
    """One stdio session. ``load`` builds the ``App`` (run in a background thread, once)."""

    def __init__(self, load: Any, out: IO[bytes]) -> None:
        self._out = out
        self._write_lock = threading.Lock()
        self._ready = threading.Event()
        self._app: App | None = None
        self._load_error: str | None = None
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lcm-mcp")
        self._places = threading.BoundedSemaphore(MAX_PENDING_CALLS)
        threading.Thread(target=self._load, args=(load,), daemon=True, name="lcm-mcp-load").start()

    def _load(self, load: Any) -> None:
        try:
            self._app = load()
        except LcmError as exc:
            self._load_error = str(exc)
        except Exception as exc:  # reported to the client, never a crash of the session
            self._load_error = f"{type(exc).__name__}: {exc}"
        finally:
            self._ready.set()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._ready.is_set() and self._app is not None:
            try:
                self._app.close()
            except Exception:  # exiting anyway; a tool call may still hold the storage
                pass

    def handle_frame(self, frame: bytes | None) -> None:
        """Answer one frame of ``read_frames`` (``None``: a frame over ``MAX_FRAME_BYTES``, already skipped)."""
        if frame is None:
            self._error(None, INVALID_REQUEST, f"frame too large (over {MAX_FRAME_BYTES} bytes): refused")
            return
        try:
            message = json.loads(frame.decode("utf-8"), parse_constant=_refuse_constant)
        except UnicodeDecodeError:
            self._error(None, PARSE_ERROR, "parse error: the frame is not UTF-8")
            return
        except RecursionError:
            self._error(None, PARSE_ERROR, "parse error: nested too deeply")
            return
        except ValueError:
            self._error(None, PARSE_ERROR, "parse error")
            return
        if message == []:
            self._error(None, INVALID_REQUEST, "invalid request: empty batch")
        for request in message if isinstance(message, list) else [message]:
            try:
                self._dispatch(request)
            except Exception as exc:  # a bug of ours answers this request, the session goes on
                self._error(_id_of(request), INTERNAL_ERROR, f"internal error: {type(exc).__name__}")

    def _dispatch(self, request: Any) -> None:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            if isinstance(request, dict) and "id" in request and ("result" in request or "error" in request):
                return  # a response to a request we never send
            self._error(_id_of(request), INVALID_REQUEST, "invalid request")
            return
        method, rid, params = request["method"], request.get("id"), request.get("params")
        if "id" not in request:
            return  # notifications (initialized, cancelled...) need no answer
        if not _valid_id(rid):
            self._error(None, INVALID_REQUEST, "invalid request: id must be a string, a number or null")
            return
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            self._error(rid, INVALID_PARAMS, "invalid params: params must be an object")
            return
        if method == "initialize":
            asked = params.get("protocolVersion")
            self._result(rid, {
                "protocolVersion": asked if isinstance(asked, str) and asked in PROTOCOL_VERSIONS
                else PROTOCOL_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "lcm", "version": __version__},
                "instructions": INSTRUCTIONS,
            })
        elif method == "ping":
            self._result(rid, {})
        elif method in ("tools/list", "tools/call"):
            self._places.acquire()  # at most MAX_PENDING_CALLS waiting: the reader waits here, not the memory
            self._pool.submit(self._tools, method, rid, params)
        elif method in ("resources/list", "prompts/list"):
            self._result(rid, {method.split("/")[0]: []})
        else:
            self._error(rid, METHOD_NOT_FOUND, f"unknown method {_shown(method)}")

    def _tools(self, method: str, rid: Any, params: dict[str, Any]) -> None:
        try:
            self._ready.wait()
            if self._app is None:
                self._error(rid, INTERNAL_ERROR, f"lcm could not start: {self._load_error}")
            elif method == "tools/list":
                self._result(rid, {"tools": [
                    {"name": name, "description": c.description, "inputSchema": {"type": "object", **c.parameters}}
                    for name, c in sorted(self._app.plugins.capabilities().items())]})
            else:
                name = params.get("name")
                capability = self._app.plugins.capabilities().get(name) if isinstance(name, str) else None
                if capability is None:
                    self._error(rid, INVALID_PARAMS, f"unknown tool {_shown(name)}")
                else:
                    self._result(rid, self._call(self._app, capability, params.get("arguments") or {}))
        except Exception as exc:  # never a request left unanswered (a future would swallow it)
            self._error(rid, INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
        finally:
            self._places.release()

    @staticmethod
    def _call(app: App, capability: Any, raw: Any) -> dict[str, Any]:
        """The ``tools/call`` result of ``capability`` run with ``raw`` arguments (checked by ``call``)."""
        try:
            result = call(app, capability, raw)
        except ArgumentError as problem:
            return {"content": [{"type": "text", "text": f"invalid arguments: {problem}"}], "isError": True}
        except LcmError as exc:
            failed = {"error": str(exc), "code": str(getattr(exc, "code", None) or type(exc).__name__)}
            return {"content": [{"type": "text", "text": json_text(failed)}], "isError": True}
        text = json_text(result)
        if len(text) > MAX_RESULT_CHARS:
            failed = {"error": f"result too large ({len(text)} characters): lower limit or token_cap",
                      "code": "result_too_large"}
            return {"content": [{"type": "text", "text": json_text(failed)}], "isError": True}
        return {"content": [{"type": "text", "text": text}], "isError": False}

    def _result(self, rid: Any, result: Any) -> None:
        self._send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _error(self, rid: Any, code: int, message: str) -> None:
        self._send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    def _send(self, message: Mapping[str, Any]) -> None:
        data = (json_text(message) + "\n").encode("utf-8")  # json_text is always encodable
        with self._write_lock:
            try:
                self._out.write(data)
                self._out.flush()
            except (OSError, ValueError):  # the client went away (broken pipe, closed stream)
                pass


def json_text(value: Any) -> str:
    """``value`` as JSON text that encodes to UTF-8 and any strict decoder accepts: a lone surrogate becomes
    U+FFFD and a non-finite number ``null``."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:  # NaN or infinity somewhere: the slow path
        text = json.dumps(_finite(value), ensure_ascii=False, allow_nan=False, default=str)
    return _SURROGATE.sub("\ufffd", text)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def read_frames(source: IO[bytes], limit: int = MAX_FRAME_BYTES) -> Iterator[bytes | None]:
    """The newline-delimited frames of ``source``, never holding more than ``limit`` + 1 bytes of one: a
    longer frame yields ``None`` at once and is then skipped up to its newline. Blank frames are left out."""
    while line := source.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            yield None
            while (rest := source.readline(limit + 1)) and not rest.endswith(b"\n"):
                pass
        elif line.strip():
            yield line


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _valid_id(rid: Any) -> bool:
    return (rid is None or isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
            or (isinstance(rid, float) and math.isfinite(rid)))


def _id_of(request: Any) -> Any:
    """The id to answer a broken request with: its own when valid, else null."""
    rid = request.get("id") if isinstance(request, dict) else None
    return rid if _valid_id(rid) else None


def _shown(value: Any, limit: int = 80) -> str:
    """A client's value for an error message: ``reprlib``'s bounded repr (never deep), cut to ``limit``."""
    text = reprlib.repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def serve(load: Any, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Serve until stdin closes (or SIGINT/SIGTERM), then exit without waiting for running tool calls."""
    source = stdin or sys.stdin.buffer
    server = Server(load, stdout or sys.stdout.buffer)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    # SIGINT too: a process started with it ignored (a script's background job) installs no handler of its
    # own, and the agent still stops its servers with it.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    try:
        for frame in read_frames(source):
            server.handle_frame(frame)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def main(*, project: Path | None, overrides: Sequence[str]) -> int:
    """``lcm [--project P] [--set K=V]... mcp`` (parsed by ``cli/main.py``): serve at once, load the plugins,
    configuration and storage in the background."""

    def load() -> App:
        from .app import App
        from .config import load_config, parse_overrides
        from .kernel.plugins import build_plugins

        plugins = build_plugins()
        config = load_config(project=project, overrides=parse_overrides(list(overrides)), plugins=plugins)
        return App(config, plugins)

    serve(load)
    sys.stdout.flush()
    os._exit(0)  # worker threads may still be inside a tool call: they only read, so do not wait for them
