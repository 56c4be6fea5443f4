"""One verb, one answer: ``lcm VERB --json`` (a real subprocess), the MCP tool (the MCP SDK's client on a real
``lcm mcp``) and the daemon's route (a real daemon over HTTP) give the same JSON for the same request.

One project is imported and compacted once for the module; the MCP answers are collected in one session."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from tests.compaction.helpers import project_dir
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, OFFLINE_ENV, run_lcm
from tests.daemon.support import DaemonProcess, free_port

MEASURED = ("summarizer_seconds", "storage_seconds")
"""Times a compaction report measures: they differ from one run to the next, whatever the door."""


@dataclass(frozen=True)
class Case:
    """One request through each door it has (``{leaf}``, ``{message}``, ``{session}``, ``{memory}`` are filled
    in from the imported project)."""

    name: str
    cli: tuple[str, ...]
    tool: tuple[str, dict[str, Any]] | None
    route: tuple[str, dict[str, Any]] | None


CASES = (
    Case("grep", ("grep", "8432", "--scope", "messages"),
         ("lcm_grep", {"pattern": "8432", "scope": "messages"}), ("/grep", {"pattern": "8432", "scope": "messages"})),
    Case("grep regex in summaries", ("grep", "84[0-9]+", "--mode", "regex", "--scope", "summaries", "--limit", "3"),
         ("lcm_grep", {"pattern": "84[0-9]+", "mode": "regex", "scope": "summaries", "limit": 3}),
         ("/grep", {"pattern": "84[0-9]+", "mode": "regex", "scope": "summaries", "limit": 3})),
    Case("grep in a session", ("grep", "integration", "--session", "{session}"),
         ("lcm_grep", {"pattern": "integration", "session": "{session}"}),
         ("/grep", {"pattern": "integration", "session": "{session}"})),
    Case("grep all projects", ("grep", "8432", "--all-projects"),
         ("lcm_grep", {"pattern": "8432", "all_projects": True}), ("/grep", {"pattern": "8432", "all_projects": True})),
    Case("search", ("search", "integration tests failing", "--limit", "4"),
         ("lcm_search", {"query": "integration tests failing", "limit": 4}),
         ("/search", {"query": "integration tests failing", "limit": 4})),
    Case("search all projects", ("search", "integration tests", "--context", "0", "--all-projects"),
         ("lcm_search", {"query": "integration tests", "context": 0, "all_projects": True}),
         ("/search", {"query": "integration tests", "context": 0, "all_projects": True})),
    Case("describe a summary", ("describe", "{leaf}"), ("lcm_describe", {"id": "{leaf}"}),
         ("/describe", {"id": "{leaf}"})),
    Case("describe a message", ("describe", "{message}", "--all-projects"),
         ("lcm_describe", {"id": "{message}", "all_projects": True}),
         ("/describe", {"id": "{message}", "all_projects": True})),
    Case("describe a memory", ("describe", "{memory}"), ("lcm_describe", {"id": "{memory}"}),
         ("/describe", {"id": "{memory}"})),
    Case("expand", ("expand", "{leaf}", "--include-messages", "--token-cap", "2000"),
         ("lcm_expand", {"id": "{leaf}", "include_messages": True, "token_cap": 2000}),
         ("/expand", {"id": "{leaf}", "include_messages": True, "token_cap": 2000})),
    Case("context", ("context", "{session}", "--budget", "3000", "--json"), None,
         ("/context", {"session_id": "{session}", "budget_tokens": 3000})),
    Case("memory list", ("memory", "list"), None, ("/memory", {"action": "list"})),
    Case("memory search", ("memory", "search", "retries"), None,
         ("/memory", {"action": "search", "query": "retries"})),
    Case("memory show", ("memory", "show", "{memory}"), None, ("/memory", {"action": "show", "id": "{memory}"})),
    Case("memory stats", ("memory", "stats"), None, ("/memory", {"action": "stats"})),
    Case("compact", ("compact",), None, ("/compact", {"mode": "full"})),
    Case("stats", ("stats", "--current"), None, ("/stats", {})),
)


@dataclass
class World:
    root: Path
    env: dict[str, str]
    daemon: DaemonProcess
    names: dict[str, str]
    tool_answers: dict[str, Any]

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return value.format(**self.names)
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, tuple):
            return tuple(self.fill(v) for v in value)
        return value

    def cli(self, *args: str) -> Any:
        done = run_lcm("--project", str(self.root), *args, *(() if "--json" in args else ("--json",)),
                       cwd=self.root, env=self.env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("doors")
    root, home = project_dir(base), base / "home" / ".lcm"
    env = {"LCM_HOME": str(home), "HOME": str(home.parent)}
    world = World(root, env, DaemonProcess(home, free_port()), {"session": CLAUDE_SAMPLE_ID}, {})
    assert run_lcm("import", str(CLAUDE_SAMPLE), "--project", str(root), cwd=root, env=env).returncode == 0
    assert run_lcm("--project", str(root), "compact", cwd=root, env=env).returncode == 0
    world.names["leaf"] = world.cli("grep", "8432", "--scope", "summaries")["summary_hits"][0]["id"]
    world.names["message"] = world.cli("grep", "8432", "--scope", "messages")["groups"][0]["hits"][0]["id"]
    world.names["memory"] = world.cli("memory", "add", "Flaky CI retries hide the port clash", "--tag", "ci")["id"]
    world.tool_answers = asyncio.run(_tool_answers(world))
    world.daemon.start(timeout=60)
    try:
        yield world
    finally:
        world.daemon.stop()


async def _tool_answers(world: World) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "lcm_framework.cli.main", "--project",
                                                                 str(world.root), "mcp"],
                                   env={**os.environ, **OFFLINE_ENV, **world.env}, cwd=str(world.root))
    answers = {}
    async with Client(params, read_timeout_seconds=60) as client:
        for case in CASES:
            if case.tool is not None:
                name, arguments = world.fill(case.tool)
                result = await client.call_tool(name, arguments)
                content = result.content[0]
                assert isinstance(content, TextContent) and not result.is_error, content
                answers[case.name] = json.loads(content.text)
    return answers


def _route(world: World, path: str, body: dict[str, Any]) -> Any:
    answer = httpx.post(f"{world.daemon.url}{path}", json={"project": str(world.root), **body},
                        headers={"Authorization": f"Bearer {world.daemon.token}"}, timeout=60)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    return found["result"] if path in ("/grep", "/search", "/describe", "/expand") else found


def _unmeasured(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unmeasured(v) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [_unmeasured(v) for v in value]
    return value


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_door_gives_the_same_result(world: World, case: Case) -> None:
    by_cli = _unmeasured(world.cli(*world.fill(case.cli)))
    assert by_cli not in ({}, [], None)  # a real answer, not an empty one matching another empty one
    if case.tool is not None:
        assert world.tool_answers[case.name] == by_cli
    if case.route is not None:
        path, body = case.route
        assert _unmeasured(_route(world, path, world.fill(body))) == by_cli


def test_a_difference_between_doors_would_be_seen(world: World) -> None:
    """The comparison is not vacuous: another request through another door gives another answer."""
    assert world.tool_answers["grep"] != world.tool_answers["grep all projects"]
    assert _route(world, "/grep", {"pattern": "8432"}) != world.cli("grep", "8432", "--scope", "messages")
