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
(``lcm_framework.capabilities.call``: required keys, types, choices, bounds,
defaults) before the handler runs, as the daemon and CLI check them; a
violation is a tool error (``isError``). An ``LcmError`` of the handler is a JSON ``{"error",
"code"}`` result, as the CLI and daemon report it; results are JSON text
bounded to ``MAX_RESULT_CHARS``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any

from . import __version__
from .capabilities import ArgumentError, call
from .errors import LcmError

if TYPE_CHECKING:
    from .app import App

MAX_RESULT_CHARS = 400_000
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

    def __init__(self, load: Any, out: IO[str]) -> None:
        self._out = out
        self._write_lock = threading.Lock()
        self._ready = threading.Event()
        self._app: App | None = None
        self._load_error: str | None = None
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lcm-mcp")
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

    def handle_line(self, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self._send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            return
        for request in message if isinstance(message, list) else [message]:
            self._dispatch(request)

    def _dispatch(self, request: Any) -> None:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            if isinstance(request, dict) and "id" in request and ("result" in request or "error" in request):
                return  # a response to a request we never send
            self._send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}})
            return
        method, rid, params = request["method"], request.get("id"), request.get("params") or {}
        if "id" not in request:
            return  # notifications (initialized, cancelled...) need no answer
        if method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            self._result(rid, {
                "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "lcm", "version": __version__},
                "instructions": INSTRUCTIONS,
            })
        elif method == "ping":
            self._result(rid, {})
        elif method in ("tools/list", "tools/call"):
            self._pool.submit(self._tools, method, rid, params)
        elif method in ("resources/list", "prompts/list"):
            self._result(rid, {method.split("/")[0]: []})
        else:
            self._send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"unknown method {method}"}})

    def _tools(self, method: str, rid: Any, params: Any) -> None:
        self._ready.wait()
        if self._app is None:
            self._send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603,
                                                               "message": f"lcm could not start: {self._load_error}"}})
            return
        capabilities = self._app.plugins.capabilities()
        if method == "tools/list":
            self._result(rid, {"tools": [
                {"name": name, "description": c.description, "inputSchema": {"type": "object", **c.parameters}}
                for name, c in sorted(capabilities.items())]})
            return
        name = params.get("name") if isinstance(params, dict) else None
        capability = capabilities.get(name) if isinstance(name, str) else None
        if capability is None:
            self._send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"unknown tool {name!r}"}})
            return
        self._result(rid, self._call(self._app, capability, params.get("arguments") or {}))

    @staticmethod
    def _call(app: App, capability: Any, raw: Any) -> dict[str, Any]:
        """The ``tools/call`` result of ``capability`` run with ``raw`` arguments (checked by ``call``)."""
        try:
            result = call(app, capability, raw)
        except ArgumentError as problem:
            return {"content": [{"type": "text", "text": f"invalid arguments: {problem}"}], "isError": True}
        except LcmError as exc:
            text = json.dumps({"error": str(exc), "code": str(getattr(exc, "code", None) or type(exc).__name__)})
        else:
            text = json.dumps(result, ensure_ascii=False, default=str)
            if len(text) > MAX_RESULT_CHARS:
                text = json.dumps({"error": f"result too large ({len(text)} characters): lower limit or token_cap"})
        return {"content": [{"type": "text", "text": text}], "isError": False}

    def _result(self, rid: Any, result: Any) -> None:
        self._send({"jsonrpc": "2.0", "id": rid, "result": result})

    def _send(self, message: Mapping[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False, default=str)
        with self._write_lock:
            try:
                self._out.write(data + "\n")
                self._out.flush()
            except (BrokenPipeError, ValueError):  # the client went away
                pass


def serve(load: Any, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
    """Serve until stdin closes (or SIGINT/SIGTERM), then exit without waiting for running tool calls."""
    source = stdin or sys.stdin
    server = Server(load, stdout or sys.stdout)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    # SIGINT too: a process started with it ignored (a script's background job) installs no handler of its
    # own, and the agent still stops its servers with it.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop)
    try:
        for line in source:
            if line.strip():
                server.handle_line(line)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def main(argv: Sequence[str]) -> int:
    """``lcm [--project P] [--set K=V]... mcp``: parse only what the server needs, load the rest lazily."""
    import argparse

    parser = argparse.ArgumentParser(prog="lcm")
    parser.add_argument("--project")
    parser.add_argument("-c", "--set", dest="overrides", action="append", default=[])
    parser.add_argument("command", choices=["mcp"])
    args = parser.parse_args(list(argv))

    def load() -> App:
        from pathlib import Path

        from .app import App
        from .config import load_config, parse_overrides
        from .plugins import build_plugins

        plugins = build_plugins()
        config = load_config(project=Path(args.project) if args.project else None,
                             overrides=parse_overrides(args.overrides), plugins=plugins)
        return App(config, plugins)

    serve(load)
    sys.stdout.flush()
    os._exit(0)  # worker threads may still be inside a tool call: they only read, so do not wait for them
