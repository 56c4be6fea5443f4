"""A real ``lcm ui`` in a subprocess over a real imported project (SQLite or PostgreSQL), and the records that
plant HTML and append a live message to its transcript."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, OFFLINE_ENV, run_lcm

PLANTED = "<script>window.__lcm_pwned = 1</script><img src=x onerror=\"window.__lcm_pwned = 2\">"
LOGIN = re.compile(r"(http://127\.0\.0\.1:(\d+))/login\?key=(\S+)")


@dataclass
class Explorer:
    base: str
    port: int
    login_key: str
    token: str
    project_id: str
    session_id: str
    transcript: Path
    env: dict[str, str]
    root: Path

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def lcm(self, *args: str) -> subprocess.CompletedProcess[str]:
        schema = ("-c", f"postgresql.schema={self.env['_schema']}") if "_schema" in self.env else ()
        done = run_lcm(*schema, *args, cwd=self.root, env=public(self.env))
        assert done.returncode == 0, done.stderr
        return done


def public(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith("_")}


def record(uuid: str, parent: str, text: str, timestamp: str) -> str:
    """One Claude Code user record of the sample session."""
    return json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external",
                       "cwd": "/home/dev/orders-api", "sessionId": CLAUDE_SAMPLE_ID, "version": "2.0.28",
                       "type": "user",
                       "message": {"role": "user", "content": text}, "uuid": uuid, "timestamp": timestamp})


def append_message(transcript: Path, text: str, n: int) -> None:
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(record(f"00000000-0000-4000-8000-{n:012d}", "c528d0e5-365b-5bd1-ae8b-23ac7c9e97da", text,
                        f"2025-10-14T14:0{5 + n}:00.000Z") + "\n")


def backend_env(kind: str, tmp: Path) -> Iterator[dict[str, str]]:
    env = {"LCM_HOME": str(tmp / "lcm-home"), "HOME": str(tmp)}
    if kind == "sqlite":
        yield env
        return
    from tests.postgres.support import require_database

    db = require_database()
    with db.fresh_schema() as schema:
        yield {**env, "LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_URL": db.url,
               "LCM_POSTGRES_ALLOW_PLAINTEXT": "true", "_schema": schema}


@contextmanager
def explorer(kind: str, tmp: Path) -> Iterator[Explorer]:
    """The sample session (plus a message holding ``PLANTED``) imported and compacted, a memory stored, and
    ``lcm ui --port 0`` serving them until the block ends."""
    for env in backend_env(kind, tmp):
        root = tmp / "orders-api"
        (root / ".git").mkdir(parents=True)
        transcript = tmp / "transcripts" / f"{CLAUDE_SAMPLE_ID}.jsonl"
        transcript.parent.mkdir()
        transcript.write_text(CLAUDE_SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
        append_message(transcript, f"Please render this safely: {PLANTED}", 0)
        probe = Explorer("", 0, "", "", "", CLAUDE_SAMPLE_ID, transcript, env, root)
        probe.lcm("import", str(transcript), "--project", str(root))
        probe.lcm("compact", "--all")
        probe.lcm("memory", "add", "Integration tests need a free port: never hard-code 8432", "--tag", "tests")
        probe.lcm("memory", "add", f"HTML stays text {PLANTED}")
        with serving(probe) as running:
            yield running


@contextmanager
def serving(probe: Explorer) -> Iterator[Explorer]:
    schema = ("-c", f"postgresql.schema={probe.env['_schema']}") if "_schema" in probe.env else ()
    process = subprocess.Popen([sys.executable, "-m", "lcm_framework.cli.main", *schema, "ui", "--port", "0"],
                               cwd=probe.root, env={**os.environ, **OFFLINE_ENV, **public(probe.env)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        found = None
        for line in process.stdout:
            found = LOGIN.search(line)
            if found:
                break
        if found is None:
            raise AssertionError(f"lcm ui printed no login URL: {process.stderr.read() if process.stderr else ''}")
        import httpx

        token = (Path(probe.env["LCM_HOME"]) / "daemon.token").read_text(encoding="utf-8").strip()
        rows = httpx.get(found.group(1) + "/projects.json", headers={"Authorization": f"Bearer {token}"}).json()
        yield Explorer(found.group(1), int(found.group(2)), found.group(3), token, rows[0]["project_id"],
                       probe.session_id, probe.transcript, probe.env, probe.root)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
