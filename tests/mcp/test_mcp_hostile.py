"""``lcm mcp`` under hostile frames: every request gets an answer, the session keeps working, memory stays
bounded and nothing reaches stderr. Raw frames over the subprocess' stdin/stdout, plus the MCP SDK's client."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TextIO

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

from lcm_framework.mcp_server import MAX_FRAME_BYTES
from tests.compaction.helpers import ingest, make_app, project_dir, texts
from tests.conftest import OFFLINE_ENV

PING = b'{"jsonrpc": "2.0", "id": "after", "method": "ping"}'


def _seeded(tmp_path: Path) -> Path:
    """A project holding a few messages (so grep and search reach the storage and its regex compiler)."""
    root = project_dir(tmp_path)
    app = make_app(root)
    with app.project() as storage:
        ingest(storage, "hostile-session", texts(4))
    app.close()
    return root


class RawSession:
    """``lcm mcp`` as a subprocess spoken to in raw bytes."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", "mcp"], cwd=root,
                                     env={**os.environ, **OFFLINE_ENV}, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def send(self, frame: bytes) -> None:
        self.stdin.write(frame + b"\n")
        self.stdin.flush()

    def call(self, rid: int, tool: str, arguments: dict[str, Any]) -> None:
        """A tools/call frame; ``json.dumps`` escapes a lone surrogate as ``\\ud800``, as JSON allows."""
        self.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}}).encode())

    def answer(self, timeout: float = 30) -> dict[str, Any]:
        """The next answer, decoded strictly (UTF-8, no NaN): what any client must be able to read."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no answer within {timeout} s")
        assert line.endswith(b"\n"), f"the server closed its output (exit {self.proc.poll()})"
        decoded: dict[str, Any] = json.loads(line.decode("utf-8", errors="strict"),
                                             parse_constant=lambda name: pytest.fail(f"{name} in an answer"))
        return decoded

    def answers(self, count: int) -> dict[Any, dict[str, Any]]:
        """The next ``count`` answers by id (tool calls run in worker threads: their order is not fixed)."""
        found = {a["id"]: a for a in (self.answer() for _ in range(count))}
        assert len(found) == count, found
        return found

    def close(self) -> str:
        """Close stdin; the exit status must be 0. Returns what the server printed on stderr."""
        self.stdin.close()
        assert self.proc.wait(timeout=15) == 0
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[RawSession]:
    session = RawSession(_seeded(tmp_path))
    yield session
    if session.proc.poll() is None:
        session.proc.kill()
        session.proc.wait()


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


def test_deep_nesting_is_a_parse_error_and_the_session_goes_on(raw: RawSession) -> None:
    raw.send(b"[" * 100_000 + b"]" * 100_000)
    raw.send(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    raw.send(PING)
    for _ in range(2):
        error = raw.answer()
        assert error["id"] is None and error["error"]["code"] == -32700
    assert raw.answer() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    assert "Traceback" not in raw.close()


SURROGATE_ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("lcm_search", {"query": "fact1 \ud800"}, "query"),
    ("lcm_grep", {"pattern": "\ud800"}, "pattern"),
    ("lcm_grep", {"pattern": "fact1", "session": "x\udfff\ud83d"}, "session"),
    ("lcm_store", {"text": "remember \ud800", "tags": ["ok"]}, "text"),
    ("lcm_store", {"text": "remember", "tags": ["\ud800"]}, "tags"),
]


def test_a_lone_surrogate_in_an_argument_is_a_tool_error(raw: RawSession) -> None:
    for rid, (tool, arguments, name) in enumerate(SURROGATE_ARGUMENTS):
        raw.call(rid, tool, arguments)
        raw.send(PING)
        result = raw.answers(2)[rid]["result"]
        assert result["isError"], (tool, arguments)
        assert result["content"][0]["text"] == f"invalid arguments: {name} must be Unicode text " \
            "(it holds a lone surrogate such as \\ud800)"
    assert raw.close() == ""


def test_a_surrogate_id_is_echoed_encodable(raw: RawSession) -> None:
    raw.send(b'{"jsonrpc": "2.0", "id": "a\\ud800", "method": "ping"}')
    assert raw.answer() == {"jsonrpc": "2.0", "id": "a\ufffd", "result": {}}
    raw.close()


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the peak RSS from /proc")
def test_a_50_mb_frame_is_refused_without_buffering_it(raw: RawSession) -> None:
    raw.send(PING)
    assert raw.answer()["id"] == "after"
    before = peak_rss_mib(raw.proc.pid)
    body = b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "lcm_grep", ' \
           b'"arguments": {"pattern": "' + b"x" * (50 << 20) + b'"}}}'
    raw.send(body)
    refused = raw.answer()
    assert refused["id"] is None and refused["error"]["code"] == -32600
    assert str(MAX_FRAME_BYTES) in refused["error"]["message"]
    raw.call(6, "lcm_grep", {"pattern": "fact1"})
    answer = raw.answer()
    assert answer["id"] == 6 and not answer["result"]["isError"]
    assert peak_rss_mib(raw.proc.pid) - before < 40, "the server buffered the oversized frame"
    raw.close()


def test_a_frame_at_the_limit_is_read(raw: RawSession) -> None:
    head, tail = b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "pad": "', b'"}'
    raw.send(head + b"y" * (MAX_FRAME_BYTES - len(head) - len(tail)) + tail)
    assert raw.answer() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    raw.close()


WRONG_TYPES: list[tuple[bytes, int | None, int | None]] = [
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
    (b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', -32700, None),
    (b'{"jsonrpc": "2.0", "id": 3, "method": 5}', -32600, 3),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": "x"}', -32602, 3),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1, 2]}', -32602, 3),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": ["lcm_grep"]}}', -32602, 3),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": {}}}', None, 3),
    (b"[]", -32600, None),
    (b"\xff\xfe{}", -32700, None),
    (b"1e999999", -32600, None),  # a number (infinity), not a request
    (b"[" + b"9" * 5000 + b"]", -32700, None),
]


def test_wrong_types_get_the_documented_error(raw: RawSession) -> None:
    """One session for all: each frame is answered once, then the ping after it."""
    for frame, code, rid in WRONG_TYPES:
        raw.send(frame)
        raw.send(PING)
        answers = raw.answers(2)
        assert set(answers) == {rid, "after"}, (frame[:80], answers)
        if code is None:
            assert "result" in answers[rid], (frame[:80], answers)
        else:
            assert answers[rid]["error"]["code"] == code, (frame[:80], answers)
    assert "Traceback" not in raw.close()


def test_arguments_of_the_wrong_type_are_a_tool_error(raw: RawSession) -> None:
    for rid, arguments in enumerate(([1], "pattern", {"pattern": {"nested": [1]}}, {"pattern": "x", "limit": 1e308}),
                                    start=1):
        raw.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                             "params": {"name": "lcm_grep", "arguments": arguments}}).encode())
    answers = raw.answers(4)
    assert all(answers[rid]["result"]["isError"] for rid in range(1, 5)), answers
    assert "Traceback" not in raw.close()


async def _sdk_session(root: Path, errlog: TextIO) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "lcm_framework.cli.main", "mcp"],
                                   env={**os.environ, **OFFLINE_ENV}, cwd=str(root))
    out: dict[str, Any] = {}
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for key, tool, arguments in (
            ("regex", "lcm_grep", {"pattern": "(unclosed", "mode": "regex"}),
            ("backreference", "lcm_grep", {"pattern": "(a)\\1", "mode": "regex"}),
            ("after", "lcm_grep", {"pattern": "fact1"}),
        ):
            result = await session.call_tool(tool, arguments)
            content = result.content[0]
            assert isinstance(content, TextContent)
            out[key] = (result.is_error, json.loads(content.text))
    return out


def test_sdk_client_invalid_regex_is_a_silent_tool_error(tmp_path: Path) -> None:
    root = _seeded(tmp_path)
    with tempfile.TemporaryFile("w+", dir=tmp_path) as errlog:
        out = asyncio.run(_sdk_session(root, errlog))
        errlog.seek(0)
        assert errlog.read() == ""  # no RE2 log line (it would print the pattern, maybe a secret)
    for key in ("regex", "backreference"):
        is_error, body = out[key]
        assert is_error and body["code"] == "invalid_regex", body
    is_error, body = out["after"]
    assert not is_error and body["groups"], body
