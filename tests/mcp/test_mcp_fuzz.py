"""Fuzzing the MCP server's JSON-RPC reader (bounded, seeded): whatever frame arrives, every request gets
exactly one answer that any strict client decodes (UTF-8, no NaN) with a documented error code, notifications
and responses get none, nothing raises and nothing hangs; the frame reader never yields more than its limit."""

from __future__ import annotations

import io
import json
import math
import threading
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lcm_framework.errors import LcmError
from lcm_framework.kernel.extensions import Argument, Capability
from lcm_framework.mcp_server import Server, read_frames

CODES = {-32700, -32600, -32601, -32602}
"""What a fuzzed frame may be answered with: parse error, invalid request, unknown method, invalid params (never
-32603, an internal error: that would be a bug of the server's own)."""


def _echo(app: Any, args: Mapping[str, Any]) -> Any:
    return {"echo": dict(args), "nan": math.nan, "surrogate": "\ud800"}


def _fail(app: Any, args: Mapping[str, Any]) -> Any:
    raise LcmError(f"refused {args['text']!r}")


ARGUMENTS = (Argument("text", str, "Text.", required=True), Argument("count", int, "A count.", minimum=0, maximum=9),
             Argument("ratio", float, "A ratio."), Argument("flag", bool, "A flag."),
             Argument("items", list, "Items."), Argument("mode", str, "A mode.", choices=("a", "b")))
TOOLS = {c.name: c for c in (Capability("echo", "Echo.", ARGUMENTS, _echo),
                             Capability("fail", "Fail.", ARGUMENTS, _fail))}
APP = SimpleNamespace(plugins=SimpleNamespace(capabilities=lambda: TOOLS), close=lambda: None)


class Sink(io.RawIOBase):
    """The server's stdout: collects answer lines; ``wait`` until a number of them arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[bytes] = []
        self._buffer = b""
        self._arrived = threading.Condition()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        with self._arrived:
            self._buffer += bytes(data)
            *complete, self._buffer = self._buffer.split(b"\n")
            self.lines.extend(complete)
            self._arrived.notify_all()
        return len(data)

    def wait(self, count: int, timeout: float = 10) -> list[bytes]:
        with self._arrived:
            assert self._arrived.wait_for(lambda: len(self.lines) >= count, timeout), \
                f"{len(self.lines)} of {count} answers within {timeout} s: {self.lines}"
            return list(self.lines)


def expected_answers(frame: bytes) -> int:
    """How many answers JSON-RPC 2.0 asks for: one per request (valid or not), none for a notification or a
    response, one for a frame that is no JSON or an empty batch."""
    try:
        message = json.loads(frame.decode("utf-8"), parse_constant=lambda name: (_ for _ in ()).throw(ValueError))
    except (ValueError, RecursionError):
        return 1
    if message == []:
        return 1
    count = 0
    for request in message if isinstance(message, list) else [message]:
        if isinstance(request, dict) and isinstance(request.get("method"), str):
            count += "id" in request
        elif not (isinstance(request, dict) and "id" in request and ("result" in request or "error" in request)):
            count += 1
    return count


def check(frame: bytes) -> None:
    sink = Sink()
    server = Server(lambda: APP, sink)  # type: ignore[arg-type]
    try:
        server.handle_frame(frame)
        wanted = expected_answers(frame)
        server.handle_frame(b'{"jsonrpc": "2.0", "id": "barrier", "method": "tools/list"}')
        lines = sink.wait(wanted + 1)
    finally:
        server.close()
    answers = [json.loads(line.decode("utf-8", errors="strict"),
                          parse_constant=lambda name: (_ for _ in ()).throw(AssertionError(name))) for line in lines]
    assert len(answers) == wanted + 1, answers
    for answer in answers:
        assert answer["jsonrpc"] == "2.0" and ("result" in answer) != ("error" in answer), answer
        rid = answer["id"]
        assert rid is None or isinstance(rid, str | float) or (isinstance(rid, int) and not isinstance(rid, bool))
        if "error" in answer:
            assert answer["error"]["code"] in CODES and isinstance(answer["error"]["message"], str), answer
        elif isinstance(answer["result"], dict) and "content" in answer["result"]:
            assert isinstance(answer["result"]["content"][0]["text"], str)


TEXT = st.text(st.characters(codec=None), max_size=12)  # surrogates included: JSON escapes them
IDS = (st.none() | st.integers() | st.integers(min_value=10**30, max_value=10**60) | TEXT | st.booleans()
       | st.floats(allow_nan=False) | st.lists(st.integers(), max_size=2)
       | st.dictionaries(TEXT, st.integers(), max_size=2))
LEAVES = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | TEXT
          | st.lists(TEXT, max_size=3))
ARGS = st.dictionaries(st.sampled_from([a.name for a in ARGUMENTS]) | TEXT, LEAVES, max_size=5)
PARAMS = (st.fixed_dictionaries({}, optional={"name": st.sampled_from([*TOOLS, "nope"]) | LEAVES,
                                             "arguments": ARGS | LEAVES, "protocolVersion": TEXT | LEAVES})
          | LEAVES)
REQUESTS = st.fixed_dictionaries({}, optional={
    "jsonrpc": st.sampled_from(["2.0", "1.0"]) | LEAVES,
    "id": IDS,
    "method": st.sampled_from(["initialize", "ping", "tools/list", "tools/call", "resources/list",
                               "notifications/initialized"]) | TEXT | LEAVES,
    "params": PARAMS,
    "result": LEAVES,
})
MESSAGES = REQUESTS | st.lists(REQUESTS, max_size=4) | LEAVES
FUZZ = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(MESSAGES)
@example({"jsonrpc": "2.0", "id": "\ud800", "method": "tools/call",
          "params": {"name": "echo", "arguments": {"text": "ok"}}})  # a NaN and a surrogate in the result
@example({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "fail", "arguments": {"text": "x"}}})
@example({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {"name": "echo", "arguments": {"text": "\udfff"}}})
@example({"jsonrpc": "2.0", "id": 10**40, "method": "ping", "params": []})
@example([{"jsonrpc": "2.0", "method": "ping"}, {"id": 2, "result": {}}])
def test_any_message_is_answered_once_per_request(message: Any) -> None:
    check(json.dumps(message).encode())  # ensure_ascii: lone surrogates travel as \\udXXX escapes, NaN as NaN


@FUZZ
@given(st.binary(max_size=80))
@example(b"[" * 100_000)
@example(b'{"id": 1, "method": "ping", "params": ' * 50_000)
@example(b'{"jsonrpc": "2.0", "id": 1' + b"0" * 5000 + b', "method": "ping"}')
@example(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": Infinity}')
@example(b'{"jsonrpc": "2.0", "id": "\xed\xa0\x80", "method": "ping"}')  # a surrogate UTF-8-encoded: invalid
@example(b"[]")
def test_any_bytes_are_answered(frame: bytes) -> None:
    check(frame)


@FUZZ
@given(st.lists(st.binary(max_size=30) | st.sampled_from([b"\n", b"\n\n", b" \n"]), max_size=12),
       st.integers(min_value=1, max_value=24))
def test_read_frames_yields_each_line_within_the_limit_and_none_beyond(chunks: list[bytes], limit: int) -> None:
    stream = b"".join(chunks)
    lines = stream.split(b"\n")
    terminated = [line + b"\n" if index < len(lines) - 1 else line for index, line in enumerate(lines)]
    expected = [None if len(line.rstrip(b"\n")) > limit else line
                for line in terminated if line.strip() or len(line.rstrip(b"\n")) > limit]
    got = list(read_frames(io.BufferedReader(io.BytesIO(stream)), limit))
    assert got == expected
