"""``lcm mcp`` as a real stdio subprocess, driven by the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from lcm_framework.compaction import CompactionEngine
from tests.compaction.helpers import ingest, make_app, project_dir, texts
from tests.conftest import OFFLINE_ENV


def _seed(root: Path) -> str:
    app = make_app(root)
    with app.project() as storage:
        cid, _ = ingest(storage, "mcp-session", texts(30))
        CompactionEngine(app).compact(storage, cid)
        leaf = storage.summaries.list_summaries(cid, depth=0)[0].summary_id
    app.close()
    return leaf


async def _session(root: Path, leaf: str) -> dict[str, object]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lcm_framework.cli.main", "--project", str(root), "mcp"],
        env={**os.environ, **OFFLINE_ENV}, cwd=str(root),
    )
    out: dict[str, object] = {}
    async with Client(params, read_timeout_seconds=60) as client:
        tools = (await client.list_tools()).tools
        out["tools"] = {t.name: t for t in tools}
        for key, name, args in (
            ("lcm_grep", "lcm_grep", {"pattern": "fact3", "scope": "messages"}),
            ("lcm_search", "lcm_search", {"query": "fact5", "limit": 3}),
            ("lcm_describe", "lcm_describe", {"id": leaf}),
            ("lcm_expand", "lcm_expand", {"id": leaf, "include_messages": True}),
            ("bad", "lcm_describe", {"id": "not-an-id"}),
            ("nul", "lcm_grep", {"pattern": "nul\u0000byte"}),
            ("unknown_session", "lcm_grep", {"pattern": "fact3", "session": "no-such-session"}),
            ("unknown_session_all", "lcm_grep", {"pattern": "fact3", "session": "no-such", "all_projects": True}),
            ("session_prefix", "lcm_grep", {"pattern": "fact3", "session": "mcp-sess"}),
            ("unknown_id", "lcm_describe", {"id": "sum_0123456789abcdef"}),
            ("unknown_expand", "lcm_expand", {"id": "sum_0123456789abcdef"}),
        ):
            content = (await client.call_tool(name, args)).content[0]
            assert isinstance(content, TextContent)
            out[key] = json.loads(content.text)
        out["invalid"] = await client.call_tool("lcm_grep", {"pattern": "x", "limit": 100_000})
    return out


def test_tools_are_listed_typed_and_callable(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    leaf = _seed(root)
    out = asyncio.run(_session(root, leaf))
    tools = out["tools"]
    assert set(tools) >= {"lcm_grep", "lcm_search", "lcm_describe", "lcm_expand"}  # type: ignore[call-overload]
    grep_schema = tools["lcm_grep"].input_schema  # type: ignore[index]
    assert grep_schema["required"] == ["pattern"]
    assert grep_schema["properties"]["pattern"]["type"] == "string"
    assert "description" in grep_schema["properties"]["limit"]
    grep = out["lcm_grep"]
    hits = [h["id"] for g in grep["groups"] for h in g["hits"]]  # type: ignore[index]  # what lcm grep --json prints
    assert hits and all(h.startswith("msg_") for h in hits)
    assert out["lcm_search"]["results"][0]["id"].startswith(("msg_", "sum_"))  # type: ignore[index]
    described = out["lcm_describe"]
    assert described["id"] == leaf and described["lineage"]["source_messages"]  # type: ignore[index]
    expanded = out["lcm_expand"]
    assert any(n["kind"] == "message" and "fact0" in n["content"] for n in expanded["nodes"])  # type: ignore[index]
    assert "error" in out["bad"]  # type: ignore[operator]
    assert "U+0000" in out["nul"]["error"]  # type: ignore[index]
    assert out["invalid"].is_error  # type: ignore[attr-defined]  # limit above the schema maximum
    # an unknown session or id is the same typed error as in the CLI and the daemon
    for key in ("unknown_session", "unknown_session_all"):
        error = out[key]
        assert error["code"] == "session_not_found" and "no session" in error["error"], error  # type: ignore[index]
    prefixed = out["session_prefix"]["groups"]  # type: ignore[index]
    assert prefixed and all(h["id"].startswith("msg_") for g in prefixed for h in g["hits"])
    for key in ("unknown_id", "unknown_expand"):
        error = out[key]
        assert error["code"] == "not_found" and "sum_0123456789abcdef is not in" in error["error"], error  # type: ignore[index]
