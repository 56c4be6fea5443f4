"""``lcm mcp`` as agents run it: answers ``initialize`` before its plugins load, and stops on SIGINT, SIGTERM or
stdin EOF (Claude Code sends SIGINT; Codex closes stdin) with no process left behind. Timings: ./dev bench mcp."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compaction.helpers import project_dir
from tests.conftest import OFFLINE_ENV


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


IGNORING_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                   "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")
"""Run the rest of the command line with SIGINT ignored, as a script's background job runs it."""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to list child processes")
@pytest.mark.parametrize("stop", ["INT", "TERM", "EOF", "INT-inherited-ignored"])
def test_stops_at_once_and_leaves_nothing(tmp_path: Path, stop: str) -> None:
    """``INT-inherited-ignored``: started by a process that ignores SIGINT (a script's background job, and
    whatever it runs, inherits that), the server still stops on the SIGINT its agent sends."""
    root = project_dir(tmp_path)
    command = ["-m", "lcm_framework.cli.main", "mcp"]
    if stop == "INT-inherited-ignored":
        command = ["-c", IGNORING_SIGINT, *command]
    proc = subprocess.Popen([sys.executable, *command], cwd=root, env={**os.environ, **OFFLINE_ENV},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    proc.stdin.write(json.dumps(init) + "\n" + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")
    proc.stdin.flush()
    first = json.loads(proc.stdout.readline())
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "lcm"
    assert first["result"]["protocolVersion"] == "2025-06-18"
    tools = json.loads(proc.stdout.readline())["result"]["tools"]
    assert {t["name"] for t in tools} >= {"lcm_grep", "lcm_expand"}
    assert children(proc.pid) == []
    if stop == "EOF":
        proc.stdin.close()
    else:
        proc.send_signal(getattr(signal, f"SIG{stop.split('-')[0]}"))
    assert proc.wait(timeout=10) == 0
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]


def test_protocol_errors_are_answered(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    lines = ["not json", json.dumps({"jsonrpc": "2.0", "id": 7, "method": "no/such"}),
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                         "params": {"name": "lcm_grep", "arguments": {"pattern": 3}}}),
             json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"})]
    proc = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", "mcp"], cwd=root,
                            env={**os.environ, **OFFLINE_ENV}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    answers = {a.get("id"): a for a in (json.loads(proc.stdout.readline()) for _ in range(4))}
    proc.stdin.close()  # (a call still running when stdin closes is abandoned: the server exits at once)
    assert proc.wait(timeout=10) == 0
    assert answers[None]["error"]["code"] == -32700 and answers[7]["error"]["code"] == -32601
    assert answers[8]["result"]["isError"] and "pattern must be of type string" in \
        answers[8]["result"]["content"][0]["text"]
    assert answers[9]["result"] == {}
