"""A fake model API for the real Claude Code and Codex CLIs: streaming Anthropic Messages and OpenAI Responses.

Every request is logged (method, path, JSON body). A request that offers tools
(the agent's main loop) takes the next step of the test's script; any other
request (titles, quota probes) gets a short text answer and takes no step.
Steps:

* ``Shell(command)``: call the agent's shell tool (``Bash``, ``exec_command``,
  ``shell_command`` or ``shell``, whichever the request offers) with ``command``;
* ``Mcp(tool, arguments)``: call the offered tool whose name ends with ``tool``
  (``mcp__lcm__lcm_grep`` ...);
* ``Text(text)``: answer with text and end the turn.

When the script is used up, main requests get ``Text("done")``. ``input_tokens`` is the prompt size every
answer reports (raise it to make an agent compact its context).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import fake_chat_completions, fake_embeddings, fake_gemini
from .dialects import Dialect, Reply, ToolCall


@dataclass(frozen=True)
class Shell:
    command: str


@dataclass(frozen=True)
class Mcp:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Text:
    text: str


Step = Shell | Mcp | Text
DIALECTS: tuple[Dialect, ...] = (fake_gemini.DIALECT, fake_chat_completions.DIALECT, fake_embeddings.DIALECT)
"""The APIs besides Anthropic Messages and OpenAI Responses, each in its own module."""


@dataclass
class Logged:
    method: str
    path: str
    body: Any
    step: Step | None


class FakeModel:
    """A local HTTP server; ``url`` is its base, ``requests`` what it received, ``script`` what comes next."""

    def __init__(self) -> None:
        self.requests: list[Logged] = []
        self.script: list[Step] = []
        self.errors: list[str] = []
        self.input_tokens = 50
        self._lock = threading.Lock()
        self._calls = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def run(self, steps: Sequence[Step]) -> None:
        """Replace the script (and forget the requests) for the next agent run."""
        with self._lock:
            self.script = list(steps)
            self.requests = []
            self.errors = []

    def main_requests(self) -> list[Logged]:
        return [r for r in self.requests if _tool_names(r.body)]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- request handling ----------------------------------------------------------

    def _next(self, body: Any) -> Step | None:
        with self._lock:
            if not _tool_names(body):
                return None
            return self.script.pop(0) if self.script else Text("done")

    def _reply(self, step: Step, body: Any) -> Reply:
        """What a dialect answers for ``step``: its text, or the call of the offered tool it names."""
        if isinstance(step, Text):
            return step.text
        try:
            return ToolCall(*_tool_call(step, body))
        except LookupError as exc:  # the script asked for a tool the agent did not offer
            with self._lock:
                self.errors.append(str(exc))
            return f"fake model: {exc}"

    def _call_id(self) -> str:
        with self._lock:
            self._calls += 1
            return f"call_{self._calls:04d}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                with model._lock:
                    model.requests.append(Logged("GET", self.path, None, None))
                if self.path.split("?")[0].endswith("/models"):
                    self._json({"object": "list", "data": [], "models": []})
                else:
                    self._json({})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                path = self.path.split("?")[0]
                dialect = next((d for d in DIALECTS if d.handles(path)), None)
                if dialect is not None:
                    step = model._next(body) if dialect.takes_step(path) else None
                    self._record(body, step)
                    reply = model._reply(step or Text("ok"), body)
                    self._send(*dialect.answer(path, body, reply, model._call_id(), model.input_tokens))
                    return
                if path.endswith("/messages/count_tokens"):
                    self._record(body, None)
                    self._json({"input_tokens": 100})
                    return
                step = model._next(body)
                self._record(body, step)
                events = _anthropic_events if path.endswith("/messages") else _responses_events
                if not path.endswith(("/messages", "/responses")):
                    self._json({})
                    return
                try:
                    stream = list(events(step or Text("ok"), body, model._call_id(), model.input_tokens))
                except LookupError as exc:  # the script asked for a tool the agent did not offer
                    with model._lock:
                        model.errors.append(str(exc))
                    stream = list(events(Text(f"fake model: {exc}"), body, model._call_id(), model.input_tokens))
                self._sse(iter(stream), named=True)

            def _record(self, body: Any, step: Step | None) -> None:
                with model._lock:
                    model.requests.append(Logged("POST", self.path, body, step))

            def _json(self, value: Any) -> None:
                self._send("application/json", json.dumps(value).encode())

            def _send(self, content_type: str, data: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: Iterator[tuple[str, dict[str, Any]]], *, named: bool) -> None:
                chunks = b"".join(
                    (f"event: {name}\n" if named else "").encode() + b"data: "
                    + json.dumps(data).encode() + b"\n\n" for name, data in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(chunks)))
                self.end_headers()
                self.wfile.write(chunks)

        return Handler


def _tool_names(body: Any) -> list[str]:
    tools = body.get("tools") if isinstance(body, dict) else None
    names = []
    for tool in tools or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
            for declaration in tool.get("functionDeclarations") or []:  # Gemini API
                if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                    names.append(declaration["name"])
            for inner in tool.get("tools") or []:  # Responses API namespaces
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    names.append(f"{name}{inner['name']}" if name else inner["name"])
    return names


def _tool_call(step: Shell | Mcp, body: Any) -> tuple[str, dict[str, Any]]:
    names = _tool_names(body)
    if isinstance(step, Mcp):
        for name in names:
            if name.endswith(step.tool):
                return name, step.arguments
        raise LookupError(f"no tool ending with {step.tool!r} offered: {names}")
    if "Bash" in names:
        return "Bash", {"command": step.command, "description": "run the command"}
    if "bash" in names:  # OpenCode, Copilot CLI
        return "bash", {"command": step.command, "description": "run the command"}
    if "exec_command" in names:
        return "exec_command", {"cmd": step.command}
    if "shell_command" in names:
        return "shell_command", {"command": step.command}
    if "run_shell_command" in names:  # Gemini CLI, Qwen Code
        return "run_shell_command", {"command": step.command, "description": "run the command",
                                     "is_background": False}
    if "shell" in names:
        return "shell", {"command": ["bash", "-lc", step.command]}
    raise LookupError(f"no shell tool offered: {names}")


def _anthropic_events(step: Step, body: Any, call_id: str, input_tokens: int) -> Iterator[tuple[str, dict[str, Any]]]:
    model = body.get("model", "claude-fake") if isinstance(body, dict) else "claude-fake"
    yield "message_start", {"type": "message_start", "message": {
        "id": f"msg_{call_id}", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": input_tokens, "output_tokens": 10}}}
    if isinstance(step, Text):
        yield "content_block_start", {"type": "content_block_start", "index": 0,
                                      "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": step.text}}
        stop = "end_turn"
    else:
        name, arguments = _tool_call(step, body)
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": f"toolu_{call_id}", "name": name, "input": {}}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(arguments)}}
        stop = "tool_use"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 10}}
    yield "message_stop", {"type": "message_stop"}


def _responses_events(step: Step, body: Any, call_id: str, input_tokens: int) -> Iterator[tuple[str, dict[str, Any]]]:
    rid = f"resp_{call_id}"
    yield "response.created", {"type": "response.created", "response": {"id": rid, "status": "in_progress"}}
    if isinstance(step, Text):
        item: dict[str, Any] = {"type": "message", "role": "assistant", "id": f"msg_{call_id}", "status": "completed",
                                "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                             "item": {**item, "content": []}}
        yield "response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                             "item_id": item["id"], "content_index": 0, "delta": step.text}
    else:
        name, arguments = _tool_call(step, body)
        namespace = None
        for tool in (body.get("tools") or []) if isinstance(body, dict) else []:
            if isinstance(tool, dict) and tool.get("type") == "namespace" and name.startswith(tool.get("name", "")):
                namespace, name = tool["name"], name[len(tool["name"]):]
        item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
                "arguments": json.dumps(arguments), "status": "completed"}
        if namespace:
            item["namespace"] = namespace
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                             "item": item}
    yield "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    yield "response.completed", {"type": "response.completed", "response": {
        "id": rid, "status": "completed", "output": [item],
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": input_tokens + 10}}}
