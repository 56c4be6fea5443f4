"""A third-party capability, described once, is served by ``lcm mcp``, the daemon and ``lcm tool`` alike."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from lcm_framework.recall.arguments import GREP
from tests.conftest import OFFLINE_ENV, run_lcm
from tests.daemon.support import DaemonProcess, free_port

PLUGIN = '''
from lcm_framework.kernel.extensions import Argument, Capability
from lcm_framework.kernel.hookspecs import hookimpl

ARGUMENTS = (
    Argument("word", str, "What to repeat.", required=True),
    Argument("times", int, "How often.", default=3, minimum=1, maximum=5),
    Argument("loud", bool, "Upper case.", default=False),
)


def repeat(app, args):
    word = args["word"].upper() if args["loud"] else args["word"]
    return {"args": dict(args), "said": " ".join([word] * args["times"]), "project": str(app.config.project_root)}


@hookimpl
def lcm_register_capabilities(register):
    register(Capability("lcm_repeat", "Repeat a word.", ARGUMENTS, repeat))
'''
EXPECTED_DEFAULTS = {"word": "hi", "times": 3, "loud": False}


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A distribution ``lcm-test-repeat`` installed on a PYTHONPATH folder: module plus entry-point metadata."""
    site = tmp_path / "site"
    info = site / "lcm_test_repeat-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "lcm_test_repeat.py").write_text(PLUGIN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lcm-test-repeat\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[lcm_framework.plugins]\nrepeat = lcm_test_repeat\n")
    return site


def _env(site: Path) -> dict[str, str]:
    return {**os.environ, **OFFLINE_ENV, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


async def _mcp(root: Path, env: dict[str, str]) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "lcm_framework.cli.main", "mcp"],
                                   env=env, cwd=str(root))
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        called = (await client.call_tool("lcm_repeat", {"word": "hi"})).content[0]
        refused = await client.call_tool("lcm_repeat", {"word": "hi", "times": 9})
    assert isinstance(called, TextContent)
    return {"tools": tools, "called": json.loads(called.text), "refused": refused}


@pytest.fixture
def daemon(tmp_path: Path, site: Path) -> Iterator[DaemonProcess]:
    proc = DaemonProcess(tmp_path / "home" / ".lcm", free_port(), env={"PYTHONPATH": _env(site)["PYTHONPATH"]})
    proc.start(timeout=60)
    try:
        yield proc
    finally:
        proc.stop()


def test_a_plugin_capability_is_served_everywhere_with_the_same_defaults(
        tmp_path: Path, site: Path, daemon: DaemonProcess) -> None:
    root = tmp_path / "proj"
    (root / ".lcm").mkdir(parents=True)
    env = _env(site)

    over_mcp = asyncio.run(_mcp(root, env))
    schema = over_mcp["tools"]["lcm_repeat"].input_schema
    assert schema["required"] == ["word"]
    assert schema["properties"]["times"] == {"type": "integer", "description": "How often.", "minimum": 1,
                                             "maximum": 5, "default": 3}
    assert over_mcp["called"]["args"] == EXPECTED_DEFAULTS and over_mcp["called"]["said"] == "hi hi hi"
    assert over_mcp["refused"].is_error and "times must be at most 5" in over_mcp["refused"].content[0].text

    headers = {"Authorization": f"Bearer {daemon.token}"}
    over_http = httpx.post(f"{daemon.url}/repeat", json={"project": str(root), "word": "hi"}, headers=headers)
    assert over_http.status_code == 200, over_http.text
    assert over_http.json()["result"] == {**over_mcp["called"], "project": str(root.resolve())}
    refused = httpx.post(f"{daemon.url}/repeat", json={"project": str(root), "word": "hi", "times": 9},
                         headers=headers)
    assert refused.status_code == 400 and "times must be at most 5" in refused.json()["message"]
    unknown = httpx.post(f"{daemon.url}/repeat", json={"project": str(root), "word": "hi", "color": "red"},
                         headers=headers)
    assert unknown.status_code == 400 and "unknown argument 'color'" in unknown.json()["message"]

    path = {"PYTHONPATH": env["PYTHONPATH"]}
    on_cli = run_lcm("tool", "repeat", "hi", cwd=root, env=path)
    assert on_cli.returncode == 0, on_cli.stderr
    assert json.loads(on_cli.stdout) == over_mcp["called"]
    loud = run_lcm("tool", "lcm_repeat", "hi", "--times", "2", "--loud", cwd=root, env=path)
    assert json.loads(loud.stdout)["said"] == "HI HI"
    too_many = run_lcm("tool", "repeat", "hi", "--times", "9", cwd=root, env=path)
    assert too_many.returncode == 2 and "times must be at most 5" in too_many.stderr


def test_grep_defaults_live_in_one_place(tmp_path: Path) -> None:
    """The CLI's options and the MCP schema of lcm_grep both come from recall_arguments.GREP."""
    limit = next(a for a in GREP if a.name == "limit")
    from lcm_framework.kernel.plugins import build_plugins

    schema = build_plugins().capabilities()["lcm_grep"].parameters
    assert schema["properties"]["limit"]["default"] == limit.default
    assert schema["properties"]["limit"]["maximum"] == limit.maximum
    helped = run_lcm("grep", "--help", cwd=tmp_path)
    assert f"(default {limit.default})" in " ".join(helped.stdout.split())
    too_many = run_lcm("grep", "x", "--limit", str(int(limit.maximum or 0) + 1), cwd=tmp_path)
    assert too_many.returncode == 2 and f"limit must be at most {limit.maximum:g}" in too_many.stderr
