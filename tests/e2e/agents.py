"""The real agent CLIs at pinned versions, installed once into an ignored cache folder and reused.

``python -m tests.e2e.agents`` installs them (``npm install --prefix .cache/agents``; ``LCM_E2E_CACHE`` moves
the folder); the e2e tests call ``ensure_agents()``, which installs them on first use and otherwise only checks
the installed versions. Nothing is downloaded when the cache already holds the pinned versions.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PINNED = {"@anthropic-ai/claude-code": "2.1.197", "@openai/codex": "0.171.0"}
BINARIES = {"@anthropic-ai/claude-code": "claude", "@openai/codex": "codex"}
INSTALL_TIMEOUT_S = 600


class AgentsUnavailable(Exception):
    """npm or the registry cannot provide the pinned CLIs here (the message says why)."""


@dataclass(frozen=True)
class Agents:
    claude: Path
    codex: Path


def cache_dir() -> Path:
    given = os.environ.get("LCM_E2E_CACHE")
    return Path(given) if given else REPO / ".cache" / "agents"


def installed_version(root: Path, package: str) -> str | None:
    try:
        return str(json.loads((root / "node_modules" / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_agents() -> Agents:
    """The pinned CLIs, installing what the cache lacks; ``AgentsUnavailable`` when npm cannot."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".install.lock").open("w") as lock:  # test workers may start at once: one installs
        fcntl.flock(lock, fcntl.LOCK_EX)
        _install_missing(root)
    bins = root / "node_modules" / ".bin"
    found = {BINARIES[name]: bins / BINARIES[name] for name in PINNED}
    absent = [str(p) for p in found.values() if not p.exists()]
    if absent:
        raise AgentsUnavailable(f"npm installed no {', '.join(absent)}")
    return Agents(claude=found["claude"], codex=found["codex"])


def _install_missing(root: Path) -> None:
    missing = [f"{name}@{version}" for name, version in PINNED.items() if installed_version(root, name) != version]
    if missing:
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise AgentsUnavailable("node and npm are not installed (needed to install the agent CLIs)")
        try:
            done = subprocess.run([npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--no-save",
                                   "--loglevel=error", *missing], capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise AgentsUnavailable(f"npm install {' '.join(missing)} did not finish in {INSTALL_TIMEOUT_S} s") \
                from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise AgentsUnavailable(f"npm install {' '.join(missing)} failed (registry unreachable?): "
                                    + " | ".join(tail))


if __name__ == "__main__":
    try:
        agents = ensure_agents()
    except AgentsUnavailable as exc:
        print(f"e2e agents: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"claude: {agents.claude}\ncodex: {agents.codex}")
