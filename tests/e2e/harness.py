"""One throwaway user of the real agents: a HOME with the agent's own files, LCM installed from this checkout,
the agent CLI talking to the fake model, and readers for what LCM stored."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import OFFLINE_ENV

from .agents import Agents
from .fake_model import FakeModel, Step

AGENT_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class User:
    """``home`` (HOME), ``project`` (a git checkout, the agent's cwd), LCM_HOME under HOME, a daemon port."""

    root: Path
    agents: Agents
    model: FakeModel
    port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    """More of the user's environment (the contrib plugins' ``PYTHONPATH``, an agent's endpoint settings)."""
    _waited: int = field(default=0, init=False)
    """Outbox rows seen by the last ``wait_processed``."""

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.home.mkdir(parents=True)
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        (self.project / "README.md").write_text("# demo project\n")

    @property
    def lcm_home(self) -> Path:
        return self.home / ".lcm"

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR", "TERM")}
        return {**keep, **OFFLINE_ENV, "HOME": str(self.home), "LCM_HOME": str(self.lcm_home),
                "LCM_DAEMON_PORT": str(self.port), "CODEX_HOME": str(self.home / ".codex"),
                "ANTHROPIC_BASE_URL": self.model.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
                "OPENAI_API_KEY": "sk-e2e-fake", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "NO_COLOR": "1", **self.extra_env}

    def lcm(self, *args: str, check: bool = True, lcm_home: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.env(), **({"LCM_HOME": str(lcm_home)} if lcm_home else {})}
        done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], cwd=self.project,
                              env=env, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"lcm {' '.join(args)} failed ({done.returncode}): {done.stderr}")
        return done

    # --- the agents ------------------------------------------------------------------

    def claude(self, prompt: str, steps: Sequence[Step], *extra: str) -> dict[str, Any]:
        """``claude -p`` (its JSON result); the fake model follows ``steps``."""
        self.model.run(steps)
        done = self._agent([str(self.agents.claude), "-p", prompt, "--output-format", "json",
                            "--allowedTools", "Bash,mcp__lcm", *extra])
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    def codex(self, prompt: str, steps: Sequence[Step], *extra: str) -> str:
        """``codex exec`` (its output); the provider is the fake model, set on the command line only."""
        self.model.run(steps)
        provider = (f'model_providers.fake={{name="fake", base_url="{self.model.url}/v1", wire_api="responses", '
                    'env_key="OPENAI_API_KEY"}')
        done = self._agent([str(self.agents.codex), "exec", "--skip-git-repo-check",
                            "--dangerously-bypass-approvals-and-sandbox", "-c", "model_provider=fake",
                            "-c", provider, "-c", "model=gpt-5", *extra, prompt])
        return done.stdout + done.stderr

    def _agent(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        # A session of its own: a signal the agent sends its process group never reaches pytest.
        done = subprocess.run(argv, cwd=self.project, env={**self.env(), **(env or {})}, capture_output=True, text=True,
                              timeout=AGENT_TIMEOUT_S, stdin=subprocess.DEVNULL, start_new_session=True)
        if done.returncode != 0:
            raise AssertionError(f"{Path(argv[0]).name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    # --- what LCM holds --------------------------------------------------------------

    def outbox(self) -> list[tuple[str, bool, str | None]]:
        """(event, processed, last_error) of every hook event the daemon queued, oldest first."""
        path = self.lcm_home / "outbox.db"
        if not path.exists():
            return []
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT event, processed_at IS NOT NULL, last_error FROM events ORDER BY seq")
            return [(str(e), bool(p), err) for e, p, err in rows]

    def shell_facts(self, program: str, timeout: float = 30) -> list[dict[str, Any]]:
        """The tool facts of the PostToolUse events the agent's hooks captured for shell commands running
        ``program`` (waiting for at least one: a plugin may run the hook detached)."""
        from lcm_framework.outbox import Outbox, outbox_path

        deadline = time.monotonic() + timeout
        while True:
            with Outbox(outbox_path(self.lcm_home)) as box:
                found = [e.payload["tool_facts"] for e in box.events()
                         if e.event == "PostToolUse"
                         and str(e.payload.get("tool_facts", {}).get("command", "")).split()[:1] == [program]]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.3)

    def wait_processed(self, events: set[str], timeout: float = 60) -> list[tuple[str, bool, str | None]]:
        """Wait until the outbox holds ``events`` queued since the previous call returned (an agent may run its
        last hook as it exits) and every queued event is processed."""
        deadline = time.monotonic() + timeout
        while True:
            rows = self.outbox()
            if events <= {e for e, _, _ in rows[self._waited:]} and all(p for _, p, _ in rows):
                self._waited = len(rows)
                return rows
            if time.monotonic() > deadline:
                raise AssertionError(f"hook events not processed in {timeout} s: {rows}")
            time.sleep(0.3)

    def turns(self, session_id: str, lcm_home: Path | None = None) -> list[tuple[str, str]]:
        """(role, content) of every stored message of the session, in order."""
        env = {**os.environ, **self.env(), "LCM_HOME": str(lcm_home or self.lcm_home)}
        app = App(load_config(project=self.project, env=env, plugins=build_plugins(env)), build_plugins())
        try:
            with app.project(self.project) as storage:
                out = []
                for conversation in storage.conversations.find_conversations(session_id):
                    out += [(m.role.value, m.content)
                            for m in storage.conversations.list_messages(conversation.conversation_id)]
                return out
        finally:
            app.close()

    def mcp_servers_left(self, grace: float = 3.0) -> list[int]:
        """Pids of ``lcm mcp`` processes still running in the project after ``grace`` seconds."""
        deadline = time.monotonic() + grace
        while True:
            left = []
            for entry in Path("/proc").iterdir():
                try:
                    argv = (entry / "cmdline").read_bytes().split(b"\0")
                    if b"mcp" in argv and any(a.endswith(b"lcm") or a == b"lcm_framework.cli.main" for a in argv) \
                            and Path(os.readlink(entry / "cwd")) == self.project:
                        left.append(int(entry.name))
                except (OSError, ValueError):
                    continue
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def stop_daemon(self) -> None:
        self.lcm("daemon", "stop", check=False)


def snapshot(paths: Sequence[Path]) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


def tool_results(body: Any) -> list[str]:
    """The text of every tool result a request carries (Anthropic ``tool_result`` blocks, Responses outputs)."""
    found: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                found.append(inner if isinstance(inner, str) else "".join(
                    b.get("text", "") for b in inner or [] if isinstance(b, dict)))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            found.append(output if isinstance(output, str) else json.dumps(output))
    return found
