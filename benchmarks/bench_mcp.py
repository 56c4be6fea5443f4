"""``lcm mcp`` start and stop: time to answer ``initialize`` and ``tools/list``, and to exit after SIGINT,
SIGTERM or stdin EOF.

Targets: ``initialize`` answered < 300 ms over interpreter start (the baseline, ``python -c pass``, measured in
the same run), exit < 200 ms after each of the three. For comparison the same figures for a server built on the
MCP SDK (what ``lcm mcp`` was): ``python -c "import mcp.server.mcpserver"`` is timed as its import floor.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_hooks import percentile, timed_runs

CLIENT = {"name": "bench", "version": "1"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT}}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def session(project: Path, env: dict[str, str], stop: str) -> tuple[float, float, float]:
    """(initialize ms, tools/list ms, exit ms after ``stop``) for one ``lcm mcp`` process."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", "mcp"], cwd=project, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    initialized = time.perf_counter()
    proc.stdin.write((json.dumps(LIST) + "\n").encode())
    proc.stdin.flush()
    tools = json.loads(proc.stdout.readline())["result"]["tools"]
    assert tools, "no tools listed"
    listed = asked = time.perf_counter()
    if stop == "EOF":
        proc.stdin.close()
    else:
        proc.send_signal(getattr(signal, f"SIG{stop}"))
    proc.wait(10)
    exited = time.perf_counter()
    return (initialized - started) * 1000, (listed - started) * 1000, (exited - asked) * 1000


def main(*, quick: bool = False) -> None:
    runs = 5 if quick else 20
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        (project / ".git").mkdir(parents=True)
        env = {**os.environ, "HOME": tmp, "LCM_HOME": str(Path(tmp) / ".lcm")}
        base = timed_runs([sys.executable, "-c", "pass"], runs)
        sdk = timed_runs([sys.executable, "-c", "import mcp.server.mcpserver"], max(3, runs // 4))
        rows = {stop: [session(project, env, stop) for _ in range(runs)] for stop in ("INT", "TERM", "EOF")}
    init = [r[0] for rs in rows.values() for r in rs]
    listed = [r[1] for rs in rows.values() for r in rs]
    print(f"python -c pass            p50 {statistics.median(base):6.0f} ms  p95 {percentile(base, .95):6.0f} ms")
    print(f"import mcp.server (SDK)   p50 {statistics.median(sdk):6.0f} ms  (the floor of an SDK-based server)")
    print(f"lcm mcp initialize        p50 {statistics.median(init):6.0f} ms  p95 {percentile(init, .95):6.0f} ms"
          f"  -> {statistics.median(init) - statistics.median(base):.0f} ms over interpreter start (target < 300)")
    print(f"lcm mcp tools/list        p50 {statistics.median(listed):6.0f} ms  p95 {percentile(listed, .95):6.0f} ms")
    for stop, values in rows.items():
        exits = [r[2] for r in values]
        print(f"exit after {stop:<4}           p50 {statistics.median(exits):6.0f} ms  max {max(exits):6.0f} ms"
              "  (target < 200)")
