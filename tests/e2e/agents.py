"""The real agent CLIs at pinned versions, each installed once into an ignored cache folder and reused.

``PINNED`` names each agent's npm package, version and command; each agent has its own npm prefix
(``.cache/agents/<agent>``; ``LCM_E2E_CACHE`` moves the folder), so installing one never touches another
and a test waits only for the agents it uses. ``python -m tests.e2e.agents [AGENT...]`` installs them by hand;
the e2e tests call ``ensure_agent(name)``, which installs on first use and otherwise only checks the
installed version. Nothing is downloaded when the cache already holds the pinned version.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

REPO = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 600


@dataclass(frozen=True)
class Cli:
    package: str
    version: str
    command: str


PINNED = {
    "claude": Cli("@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": Cli("@openai/codex", "0.171.0", "codex"),
    "gemini": Cli("@google/gemini-cli", "0.61.0", "gemini"),
    "qwen": Cli("@qwen-code/qwen-code", "0.24.4", "qwen"),
    "opencode": Cli("opencode-ai", "1.18.33", "opencode"),
    "copilot": Cli("@github/copilot", "1.0.102", "copilot"),
}
"""One row per agent; add an agent by adding its row."""


class AgentsUnavailable(Exception):
    """npm or the registry cannot provide a pinned CLI here (the message says why)."""


def cache_dir() -> Path:
    given = os.environ.get("LCM_E2E_CACHE")
    return Path(given) if given else REPO / ".cache" / "agents"


def installed_version(root: Path, package: str) -> str | None:
    try:
        return str(json.loads((root / "node_modules" / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_agent(name: str) -> Path:
    """The pinned CLI ``name`` (a ``PINNED`` key), installing it when its prefix lacks it."""
    cli = PINNED[name]
    root = cache_dir() / name
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".install.lock").open("w") as lock:  # test workers may start at once: one installs
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version(root, cli.package) != cli.version:
            _install(root, f"{cli.package}@{cli.version}")
    binary = root / "node_modules" / ".bin" / cli.command
    if not binary.exists():
        raise AgentsUnavailable(f"npm installed no {binary}")
    return binary


class Agents:
    """The pinned CLIs by agent name (``agents.claude``...), each installed on first use; when one cannot be,
    ``unavailable`` gets the reason (a test skips, or fails under CI), else ``AgentsUnavailable`` is raised."""

    def __init__(self, unavailable: Callable[[str], NoReturn] | None = None) -> None:
        self._unavailable = unavailable

    def __getattr__(self, name: str) -> Path:
        if name not in PINNED:
            raise AttributeError(name)
        try:
            return ensure_agent(name)
        except AgentsUnavailable as exc:
            if self._unavailable is None:
                raise
            self._unavailable(f"the real {name} CLI is unavailable: {exc}")


def _install(root: Path, spec: str) -> None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise AgentsUnavailable("node and npm are not installed (needed to install the agent CLIs)")
    try:
        done = subprocess.run([npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--no-save",
                               "--loglevel=error", spec], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AgentsUnavailable(f"npm install {spec} did not finish in {INSTALL_TIMEOUT_S} s") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise AgentsUnavailable(f"npm install {spec} failed (registry unreachable?): " + " | ".join(tail))


if __name__ == "__main__":
    try:
        for agent in sys.argv[1:] or list(PINNED):
            print(f"{agent}: {ensure_agent(agent)}")
    except AgentsUnavailable as exc:
        print(f"e2e agents: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
