"""``lcm_store`` and ``lcm_feedback`` through a real ``lcm mcp`` stdio subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from tests.compaction.helpers import project_dir
from tests.conftest import OFFLINE_ENV, run_lcm


async def _calls(root: Path, env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "lcm_framework.cli.main", "--project", str(root), "mcp"],
                                   env=env, cwd=str(root))
    out = []
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "array" in json.dumps(tools["lcm_store"].input_schema["properties"]["tags"])
        for name, args in calls:
            content = (await client.call_tool(name, args)).content[0]
            assert isinstance(content, TextContent)
            out.append(json.loads(content.text))
    return out


def test_store_dedup_and_feedback_over_mcp(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(tmp_path / "home")}
    stored, again, useful, summary, bad = asyncio.run(_calls(root, env, [
        ("lcm_store", {"text": "The orders API paginates with opaque cursors", "tags": ["api", "orders"]}),
        ("lcm_store", {"text": "Orders API pagination uses opaque cursors"}),
        ("lcm_feedback", {"id": "mem_1", "useful": True}),
        ("lcm_feedback", {"id": "sum_0123456789abcdef", "useful": False}),
        ("lcm_feedback", {"id": "mem_99", "useful": True}),
    ]))
    assert stored["id"] == "mem_1" and stored["created"] and stored["tags"] == ["api", "orders"]
    assert again["id"] == "mem_1" and not again["created"] and again["confidence"] > stored["confidence"]
    assert useful["confidence"] > again["confidence"]
    assert summary == {"id": "sum_0123456789abcdef", "useful": False}
    assert bad["code"] == "memory_not_found"
    done = run_lcm("--project", str(root), "memory", "show", "mem_1", "--json", cwd=root,
                   env={"LCM_HOME": env["LCM_HOME"]})
    shown = json.loads(done.stdout)
    assert shown["lineage"]["origin"] == "mcp" and shown["recall"]["useful"] == 1
