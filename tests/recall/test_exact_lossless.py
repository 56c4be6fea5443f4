"""Exact losslessness: what an agent wrote comes back byte for byte from every surface.

Transcripts with awkward text (leading and trailing whitespace, ``\\r\\n``, tabs, control characters other
than U+0000, combining marks, very long lines, empty text blocks) are imported with the real ``lcm import``;
``expand`` and ``describe`` over the CLI (``--json``), ``lcm mcp`` and a real daemon must return every
message's content exactly, and ``lcm export`` then ``lcm import-records`` into another home must keep it.

A message's expected content is what the Claude format defines (docs/formats.md): a string ``content`` as it
is, a block list as its non-empty text blocks joined by newlines, a tool result as its text. Texts that the
built-in scrubbing rules would redact are left out (redaction is the one intended change).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from lcm_scrub_gitleaks.plugin import builtin_pack
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from lcm_framework.compaction.ids import message_ref
from lcm_framework.scrub import scrubber_from_packs
from tests.conftest import OFFLINE_ENV, run_lcm
from tests.daemon.support import DaemonProcess, free_port

CAP = 100_000
"""The largest token cap expand takes; no message here reaches it (the longest is ~12k tokens)."""
MAX_CHARS = 200_000
"""The largest content the describe tool returns uncut; no message here reaches it."""
SCRUBBER = scrubber_from_packs([builtin_pack()])

_awkward_char = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")
_controls = st.text(st.sampled_from([chr(c) for c in (*range(1, 32), *range(0x7F, 0xA0), 0x2028, 0x2029, 0xFEFF)]),
                    min_size=1, max_size=6)
_combining = st.text(st.characters(categories=["Mn", "Me"]), min_size=1, max_size=6)
_edge = st.sampled_from(["", " ", "  ", "\t", "\n", "\n\n", "\r\n", " \t\r\n", "\r", "\u00a0", "\u3000"])
_word = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=12)
_body = st.lists(st.one_of(_word, _controls, _combining, st.text(_awkward_char, max_size=8)), max_size=8).map("".join)
_long_line = st.builds(lambda word, n: (word + " ") * n, _word, st.integers(2_000, 4_000))
text = st.builds(lambda a, b, c: a + b + c, _edge, st.one_of(_body, _long_line), _edge)
"""A text with awkward edges around an awkward body or a very long line (never wholly empty: see ``message``)."""


@st.composite
def message(draw: st.DrawFn) -> tuple[str, Any, str]:
    """(record type, message content, the content LCM must return for it)."""
    shape = draw(st.sampled_from(["string", "blocks", "tool_result"]))
    if shape == "string":
        body = draw(text.filter(str.strip))
        return "user", body, body
    if shape == "tool_result":
        body = draw(text)
        return "user", [{"type": "tool_result", "tool_use_id": "toolu_01", "content": body}], body
    texts = draw(st.lists(st.one_of(st.just(""), text), min_size=1, max_size=4))
    assume(any(texts))
    role = draw(st.sampled_from(["user", "assistant"]))
    return role, [{"type": "text", "text": t} for t in texts], "\n".join(t for t in texts if t)


def transcript(session: str, messages: list[tuple[str, Any, str]], cwd: Path) -> str:
    lines, parent = [], None
    for i, (kind, content, _expected) in enumerate(messages):
        record_id = str(uuid.UUID(int=i + 1))
        lines.append(json.dumps({
            "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(cwd),
            "sessionId": session, "version": "2.0.28", "type": kind, "uuid": record_id,
            "timestamp": f"2025-10-14T14:{i // 60:02d}:{i % 60:02d}.000Z",
            "message": {"role": kind, "content": content},
        }, ensure_ascii=bool(i % 2)))  # both escaped and raw UTF-8 lines
        parent = record_id
    return "".join(f"{line}\n" for line in lines)


LONG = "\n\n  $ make\r\n" + "".join(f"step {i} ok; " for i in range(4_000))
"""A tool output of ~11k tokens, one very long line (below the large-file threshold of 25k tokens)."""
HAND = [
    ("user", "  indented output\n\n", "  indented output\n\n"),
    ("assistant", [{"type": "text", "text": ""}, {"type": "text", "text": "\tfirst\r\nsecond\r\n"},
                   {"type": "text", "text": ""}, {"type": "text", "text": " e\u0301\u20dd \x01\x1f\x7f\x85 "}],
     "\tfirst\r\nsecond\r\n\n e\u0301\u20dd \x01\x1f\x7f\x85 "),
    ("user", [{"type": "tool_result", "tool_use_id": "toolu_01", "content": LONG}],
     LONG),
    ("user", "\u2028\ufeff\u00a0trailing\t\t", "\u2028\ufeff\u00a0trailing\t\t"),
]


class Surfaces:
    """One project and LCM home, with every way a user or agent reads a message back."""

    def __init__(self, base: Path, home: str) -> None:
        self.root = base / "project"
        self.root.mkdir(exist_ok=True)
        (self.root / ".git").mkdir(exist_ok=True)
        self.home = base / home / ".lcm"
        self.env = {"LCM_HOME": str(self.home), "HOME": str(self.home.parent), "LCM_STORAGE_BACKEND": "sqlite"}

    def lcm(self, *args: str) -> str:
        done = run_lcm("--project", str(self.root), *args, cwd=self.root, env=self.env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    def message_ids(self) -> list[str]:
        """The project's messages in conversation order, read from storage (not from a surface under test)."""
        from lcm_framework.app import App
        from lcm_framework.config import load_config
        from lcm_framework.kernel.plugins import build_plugins

        plugins = build_plugins({**os.environ, **self.env})
        app = App(load_config(project=self.root, env={**os.environ, **self.env}, plugins=plugins), plugins)
        try:
            with app.project() as storage:
                (conversation,) = storage.conversations.list_conversations()
                return [message_ref(m.message_id)
                        for m in storage.conversations.list_messages(conversation.conversation_id)]
        finally:
            app.close()

    def cli(self, ids: list[str]) -> list[tuple[str, str]]:
        """(expand, describe) content of each message through ``lcm ... --json``."""
        out = []
        for ref in ids:
            (node,) = json.loads(self.lcm("expand", ref, "--token-cap", str(CAP), "--json"))["nodes"]
            out.append((node["content"], json.loads(self.lcm("describe", ref, "--json"))["content"]))
        return out

    def mcp(self, ids: list[str]) -> list[tuple[str, str]]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "lcm_framework.cli.main", "--project", str(self.root), "mcp"],
                                       env={**os.environ, **OFFLINE_ENV, **self.env}, cwd=str(self.root))

        async def session() -> list[tuple[str, str]]:
            async with Client(params, read_timeout_seconds=120) as client:
                async def call(name: str, args: dict[str, Any]) -> Any:
                    content = (await client.call_tool(name, args)).content[0]
                    assert isinstance(content, TextContent)
                    return json.loads(content.text)

                out = []
                for ref in ids:
                    expanded = await call("lcm_expand", {"id": ref, "token_cap": CAP})
                    described = await call("lcm_describe", {"id": ref, "max_chars": MAX_CHARS})
                    assert described["content_truncated"] is False
                    (node,) = expanded["nodes"]
                    out.append((node["content"], described["content"]))
                return out

        return asyncio.run(session())

    def daemon(self, ids: list[str]) -> list[tuple[str, str]]:
        daemon = DaemonProcess(self.home, free_port(), env=self.env).start(timeout=60)
        try:
            headers = {"Authorization": f"Bearer {daemon.token}"}
            out = []
            for ref in ids:
                body = {"project": str(self.root), "id": ref}
                expanded = httpx.post(f"{daemon.url}/expand", json={**body, "token_cap": CAP}, headers=headers,
                                      timeout=60)
                described = httpx.post(f"{daemon.url}/describe", json={**body, "max_chars": MAX_CHARS},
                                       headers=headers, timeout=60)
                assert expanded.status_code == described.status_code == 200, (expanded.text, described.text)
                (node,) = expanded.json()["result"]["nodes"]
                found = described.json()["result"]
                assert found["content_truncated"] is False
                out.append((node["content"], found["content"]))
            return out
        finally:
            daemon.stop()


@pytest.mark.slow
@settings(max_examples=2, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(st.lists(message(), min_size=2, max_size=5))
@example(HAND)
def test_every_surface_returns_every_message_byte_for_byte(tmp_path: Path,
                                                           messages: list[tuple[str, Any, str]]) -> None:
    expected = [want for _kind, _content, want in messages]
    assume(all(SCRUBBER.scrub_text(want)[0] == want for want in expected))
    base = Path(tempfile.mkdtemp(dir=tmp_path))
    first = Surfaces(base, "home-a")
    session = str(uuid.uuid4())
    path = base / f"{session}.jsonl"
    path.write_text(transcript(session, messages, first.root), encoding="utf-8")
    report = json.loads(first.lcm("import", str(path), "--project", str(first.root), "--json"))
    assert not report["quarantined"] and not report["redactions"] and not report["errors"], report
    ids = first.message_ids()
    assert len(ids) == len(expected)
    both = [(want, want) for want in expected]
    assert first.cli(ids) == both
    assert first.mcp(ids) == both
    assert first.daemon(ids) == both

    exported = base / "records.jsonl"
    first.lcm("export", "-o", str(exported))
    records = [json.loads(line) for line in exported.read_bytes().split(b"\n")[1:] if line]  # JSON Lines: \n only
    (conversation,) = [r for r in records if r["type"] == "conversation"]
    assert [m["content"] for m in conversation["messages"]] == expected
    second = Surfaces(base, "home-b")
    second.lcm("import-records", str(exported))
    assert second.mcp(second.message_ids()) == both
