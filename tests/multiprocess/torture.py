"""Many real LCM processes on one project at once, some killed with SIGKILL, and the invariants after.

A run drives, in parallel and at random moments: a real daemon fed by ``lcm hook Stop`` processes while
transcripts grow (the daemon itself is SIGKILLed and restarted), writer processes that append through
the storage API and log each append once it returned (committed), ``lcm import`` of other transcripts,
``lcm compact``, CLI readers (``grep``, ``stats``, ``status``) and MCP client sessions against ``lcm mcp``.
A monitor thread watches ``/proc/<pid>/fd`` of every process of the run for database, WAL, SHM or journal
files that were unlinked under it. ``Run.verify()`` then checks every invariant; the normal suite runs a
short one (``tests/multiprocess/test_torture.py``), ``./dev bench soak`` a long one.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.ingest import import_sources
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.outbox import read_backlog
from tests.conftest import OFFLINE_ENV, REPO
from tests.daemon.support import free_port
from tests.ingest.support import claude_records, write_jsonl
from tests.procfs import deleted_database_files

MARKER = "LCM_TORTURE_RUN"
"""Every process of a run inherits this variable: the monitor finds them (and their children) by it."""

WRITER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from lcm_framework.app import App
    from lcm_framework.config import load_config
    from lcm_framework.kernel.plugins import build_plugins
    from lcm_framework.storage.models import NewMessage, Role

    root, log, session, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    plugins = build_plugins()
    app = App(load_config(project=root, plugins=plugins), plugins)
    with app.project(root) as storage:
        conv = storage.conversations.get_or_create_conversation(session)
        done = len(storage.conversations.list_messages(conv.conversation_id))
        for i in range(done, done + count):
            text = f"{session} write {i}"
            storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, text, 3)])
            os.write(fd, (text + "\\n").encode())  # only after the append returned: committed
    app.close()
""")

MCP_CLIENT = textwrap.dedent("""
    import asyncio, os, sys
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def main(root):
        params = StdioServerParameters(command=sys.executable, cwd=root, env=dict(os.environ),
                                       args=["-m", "lcm_framework.cli.main", "--project", root, "mcp"])
        async with Client(params, read_timeout_seconds=60) as client:
            await client.call_tool("lcm_grep", {"pattern": "question", "scope": "messages"})
            await client.call_tool("lcm_search", {"query": "answer", "limit": 3})

    asyncio.run(main(sys.argv[1]))
""")


@dataclass(frozen=True)
class Plan:
    """What one run does. ``duration_s`` of chaos, then everything is drained and verified."""

    duration_s: float = 20.0
    sessions: int = 3          # transcripts grown through hooks
    chunks: int = 8            # growth steps per hooked transcript
    imports: int = 3           # transcripts imported by ``lcm import`` processes
    parallel: int = 3          # chaos processes alive at once
    kill_share: float = 0.3    # share of killable processes SIGKILLed at a random moment
    daemon_kills: int = 2
    seed: int = field(default_factory=lambda: random.SystemRandom().randrange(2**32))
    postgres: dict[str, str] | None = None  # LCM_POSTGRES_URL and the schema, for the PostgreSQL backend


@dataclass
class Stats:
    """Per operation kind: how many ran, how many were killed, and their latencies."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    killed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    failed: list[str] = field(default_factory=list)

    def p95(self, kind: str) -> float:
        values = sorted(self.latencies[kind])
        return values[min(len(values) - 1, int(0.95 * len(values)))] if values else 0.0


class Monitor(threading.Thread):
    """Polls ``/proc`` for processes of the run and records deleted database files they keep holding."""

    def __init__(self, run_id: str) -> None:
        super().__init__(daemon=True)
        self._needle = f"{MARKER}={run_id}".encode()
        self._halt = threading.Event()
        self.violations: list[tuple[int, str]] = []
        self.polls = 0

    def _pids(self) -> list[int]:
        found = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and entry.name != str(os.getpid()):
                try:
                    with open(f"/proc/{entry.name}/environ", "rb") as fh:
                        if self._needle in fh.read():
                            found.append(int(entry.name))
                except OSError:
                    continue
        return found

    def run(self) -> None:
        suspects: dict[tuple[int, str], float] = {}
        while not self._halt.wait(0.02):
            self.polls += 1
            now = time.monotonic()
            seen = {(pid, path) for pid in self._pids() for path in deleted_database_files(pid)}
            for key in seen:
                # SQLite unlinks the -shm of a database whose last connection it is closing a moment before
                # it closes the descriptor: only a file still held a quarter second later is a violation.
                first = suspects.setdefault(key, now)
                if now - first > 0.25 and key not in self.violations:
                    self.violations.append(key)
            for key in set(suspects) - seen:
                del suspects[key]

    def stop(self) -> None:
        self._halt.set()
        self.join(5)


class Run:
    """One torture run in ``base`` (its own LCM home, project, transcripts and logs)."""

    def __init__(self, base: Path, plan: Plan) -> None:
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.id = uuid.uuid4().hex
        self.home = base / "lcm-home"
        self.project = base / "project"
        (self.project / ".git").mkdir(parents=True)
        self.logs = base / "logs"
        self.logs.mkdir()
        self.port = free_port()
        self.env = {**os.environ, **OFFLINE_ENV, MARKER: self.id, "LCM_HOME": str(self.home),
                    "LCM_DAEMON_PORT": str(self.port), "LCM_DAEMON_AUTOSTART": "false",
                    "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
        if plan.postgres is not None:
            self.home.mkdir(mode=0o700)
            (self.home / "config.toml").write_text(tomli_w.dumps(
                {"storage": {"backend": "postgresql"}, "postgresql": {"schema": plan.postgres["schema"]}}))
            self.env |= {"LCM_POSTGRES_URL": plan.postgres["url"], "LCM_POSTGRES_ALLOW_PLAINTEXT": "true"}
        self.hooked = [self.project / f"hooked-{n}.jsonl" for n in range(plan.sessions)]
        self.imported = [write_jsonl(base / "other" / f"imported-{n}.jsonl",
                                     claude_records(f"imported-{n}", str(self.project), 12 + 4 * n))
                         for n in range(plan.imports)]
        self.stats = Stats()
        self.monitor = Monitor(self.id)
        self.daemon: subprocess.Popen[bytes] | None = None
        self._writers = 0
        self.lost = 0           # committed records missing or different after the run
        self.damaged = 0        # databases failing their integrity check

    # --- processes ----------------------------------------------------------

    def _spawn(self, args: list[str], *, stdin: int | None = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
        return subprocess.Popen(args, cwd=self.project, env=self.env, stdin=stdin,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def lcm(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "lcm_framework.cli.main", *args]

    def start_daemon(self) -> None:
        import httpx

        log = open(self.logs / "daemon.log", "ab")  # noqa: SIM115 - the child keeps it
        self.daemon = subprocess.Popen(self.lcm("daemon", "start", "--foreground"), cwd=self.project,
                                       env=self.env, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise AssertionError(f"the daemon exited: {(self.logs / 'daemon.log').read_text()[-3000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=0.5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise AssertionError("the daemon did not answer in time")

    def stop_daemon(self, sig: int = signal.SIGTERM) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.send_signal(sig)
            try:
                self.daemon.wait(60)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait(10)
        self.daemon = None

    def _hook(self, event: str, transcript: Path, **extra: object) -> None:
        payload = {"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": str(self.project),
                   "hook_event_name": event, **extra}
        started = time.monotonic()
        done = subprocess.run(self.lcm("hook", event), input=json.dumps(payload).encode(), cwd=self.project,
                              env=self.env, capture_output=True, timeout=120)
        self.stats.latencies[f"hook {event}"].append(time.monotonic() - started)
        if done.returncode != 0:
            self.stats.failed.append(f"hook {event} exited {done.returncode}: {done.stderr.decode()[-500:]}")

    # --- chaos ---------------------------------------------------------------

    def _chaos_command(self, kind: str | None = None) -> tuple[str, list[str], bool]:
        """(kind, argv, killable): a process of ``kind``, or one drawn at random from the mix."""
        kind = kind or self.rng.choice(["writer", "writer", "import", "compact", "grep", "stats", "status", "mcp"])
        if kind == "writer":
            self._writers += 1
            session = f"writer-{self._writers % 4}"
            return kind, [sys.executable, "-c", WRITER, str(self.project), str(self.logs / f"{session}.log"),
                          session, str(self.rng.randint(20, 120))], True
        if kind == "import":
            picked = self.rng.sample(self.imported, self.rng.randint(1, len(self.imported)))
            return kind, self.lcm("import", *map(str, picked)), True
        if kind == "compact":
            return kind, self.lcm("compact", "--all"), True
        if kind == "grep":
            return kind, self.lcm("grep", self.rng.choice(["question", "answer", "write", "file3"])), False
        if kind == "mcp":
            return kind, [sys.executable, "-c", MCP_CLIENT, str(self.project)], False
        return kind, self.lcm(kind, "--json"), False

    def _chaos(self, until: float) -> None:
        running: list[tuple[str, subprocess.Popen[bytes], float, float | None]] = []
        while time.monotonic() < until or running:
            now = time.monotonic()
            still = []
            for kind, proc, started, kill_at in running:
                if proc.poll() is None and kill_at is not None and now >= kill_at:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(10)
                    self.stats.killed[kind] += 1
                    continue
                if proc.poll() is None:
                    still.append((kind, proc, started, kill_at))
                    continue
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                if proc.stderr:
                    proc.stderr.close()
                self.stats.latencies[kind].append(now - started)
                # Exit 1 is "nothing matched" for grep; anything else from a process not killed is a failure.
                if proc.returncode not in (0, 1) or "Traceback" in err:
                    self.stats.failed.append(f"{kind} exited {proc.returncode}: {err[-800:]}")
            running = still
            if now < until and len(running) < self.plan.parallel:
                kind, argv, killable = self._chaos_command()
                kill_at = (now + self.rng.uniform(0.2, 2.0)
                           if killable and self.rng.random() < self.plan.kill_share else None)
                running.append((kind, self._spawn(argv), now, kill_at))
            time.sleep(0.02)

    def _grow_transcripts(self, until: float) -> None:
        """Append a chunk to each hooked transcript, then fire Stop, spread over the chaos window."""
        records = {t: claude_records(t.stem, str(self.project), self.plan.chunks * 2) for t in self.hooked}
        for t in self.hooked:
            t.write_text("")
            self._hook("SessionStart", t, source="startup")
        per_chunk = len(next(iter(records.values()))) // self.plan.chunks
        kills = sorted(self.rng.sample(range(1, self.plan.chunks), min(self.plan.daemon_kills, self.plan.chunks - 1)))
        pause = max(0.0, (until - time.monotonic()) / (self.plan.chunks + 1))
        for n in range(self.plan.chunks):
            if n in kills:
                self.stop_daemon(signal.SIGKILL)
                self.stats.killed["daemon"] += 1
            for t in self.hooked:
                with t.open("a", encoding="utf-8") as fh:
                    for record in records[t][n * per_chunk:(n + 1) * per_chunk]:
                        fh.write(json.dumps(record) + "\n")
                self._hook("Stop", t, stop_hook_active=False)
            if self.rng.random() < 0.5:  # a session resumed elsewhere: the daemon reads its restored context
                self._hook("SessionStart", self.rng.choice(self.hooked), source="resume")
            if self.daemon is None and self.rng.random() < 0.6:
                self.start_daemon()
            time.sleep(pause * self.rng.uniform(0.5, 1.5))
        if self.daemon is None:
            self.start_daemon()

    def execute(self) -> None:
        """Chaos for ``plan.duration_s``, then drain: SessionEnd, the outbox empty, a last complete import."""
        self.monitor.start()
        try:
            self.start_daemon()
            until = time.monotonic() + self.plan.duration_s
            grower = threading.Thread(target=self._grow_transcripts, args=(until,))
            grower.start()
            self._chaos(until)
            grower.join()
            for t in self.hooked:
                self._hook("SessionEnd", t, reason="exit")
            self._wait_for_outbox()
            final = subprocess.run(self.lcm("import", *map(str, self.imported)), cwd=self.project, env=self.env,
                                   capture_output=True, timeout=300)
            assert final.returncode == 0, final.stderr.decode()[-2000:]
            self.stop_daemon()
        finally:
            self.stop_daemon(signal.SIGKILL)
            self.monitor.stop()

    def _wait_for_outbox(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            backlog = read_backlog(self.home)
            if backlog is None or backlog.pending == 0:
                return
            time.sleep(0.1)
        raise AssertionError(f"the outbox did not drain: {read_backlog(self.home)}")

    def solo_latencies(self, rounds: int = 3) -> dict[str, float]:
        """p95 seconds of each chaos process kind run alone on the final store: the soak's baseline."""
        solo: dict[str, list[float]] = defaultdict(list)
        kinds = ("writer", "import", "compact", "grep", "stats", "status", "mcp")
        for _ in range(rounds):
            for kind in kinds:
                _kind, argv, _killable = self._chaos_command(kind)
                started = time.monotonic()
                subprocess.run(argv, cwd=self.project, env=self.env, capture_output=True, timeout=300)
                solo[kind].append(time.monotonic() - started)
        return {k: sorted(v)[min(len(v) - 1, int(0.95 * len(v)))] for k, v in solo.items()}

    # --- invariants ----------------------------------------------------------

    @contextmanager
    def app(self, home: Path | None = None) -> Iterator[App]:
        env = {k: v for k, v in self.env.items() if k != MARKER}
        if home is not None:  # a fresh, separate SQLite store for the oracle
            env = {**{k: v for k, v in env.items() if not k.startswith("LCM_POSTGRES")}, "LCM_HOME": str(home)}
        app = App(load_config(project=self.project, env=env, plugins=build_plugins(env)), build_plugins(env))
        try:
            yield app
        finally:
            app.close()

    def messages(self, app: App) -> dict[str, list[tuple[int, str, str]]]:
        with app.project(self.project) as storage:
            return {c.session_id: [(m.seq, m.role.value, m.content)
                                   for m in storage.conversations.list_messages(c.conversation_id)]
                    for c in storage.conversations.list_conversations()}

    def verify(self) -> list[str]:
        """Every broken invariant, in words (empty when the run lost and damaged nothing)."""
        problems = [f"process failed: {f}" for f in self.stats.failed]
        problems += [f"pid {pid} kept a deleted file open: {path}" for pid, path in self.monitor.violations]
        problems += self._integrity()
        with self.app() as app:
            stored = self.messages(app)
        for log in sorted(self.logs.glob("writer-*.log")):
            committed = log.read_text().splitlines()
            got = [content for _seq, _role, content in stored.get(log.stem, [])]
            missing = sorted(set(committed) - set(got))
            self.lost += len(missing)
            if missing:
                problems.append(f"{log.stem}: {len(missing)} committed write(s) lost, e.g. {missing[:3]}")
            if [seq for seq, _r, _c in stored.get(log.stem, [])] != list(range(len(got))):
                problems.append(f"{log.stem}: message sequence has gaps or duplicates")
            if len(got) != len(set(got)):
                problems.append(f"{log.stem}: a write was stored twice")
        fresh = self.home.parent / "oracle-home"
        with self.app(fresh) as oracle:
            report = import_sources(oracle, [*self.hooked, *self.imported], project=self.project)
            assert report.errors == [], report.errors
            expected = self.messages(oracle)
        for session, messages in sorted(expected.items()):
            if stored.get(session) != messages:
                got = stored.get(session) or []
                self.lost += len(set(messages) - set(got))
                differ = [i for i, (a, b) in enumerate(zip(got, messages, strict=False)) if a != b]
                first = differ[0] if differ else min(len(got), len(messages))
                problems.append(f"{session}: {len(got)} message(s) stored, a sequential import stores "
                                f"{len(messages)} (first difference at {first})")
        return problems

    def _integrity(self) -> list[str]:
        problems = []
        for path in sorted(self.home.rglob("*.db")):
            conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            try:
                result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            except sqlite3.Error as exc:
                result = [f"{type(exc).__name__}: {exc}"]
            finally:
                conn.close()
            if result != ["ok"]:
                self.damaged += 1
                problems.append(f"integrity_check of {path.relative_to(self.home)}: {result[:3]}")
        if self.plan.postgres is not None:
            with self.app() as app:
                bad = [h for h in app.storage.check_integrity() if not h.ok]
            self.damaged += len(bad)
            problems += [f"check_integrity of project {h.project}: {h.state} {h.detail}" for h in bad]
        return problems

    def summary(self) -> dict[str, Any]:
        kinds = sorted(self.stats.latencies)
        return {"seed": self.plan.seed, "monitor_polls": self.monitor.polls, "lost": self.lost,
                "damaged": self.damaged,
                "operations": {k: len(self.stats.latencies[k]) for k in kinds},
                "killed": dict(self.stats.killed),
                "p95_s": {k: round(self.stats.p95(k), 3) for k in kinds}}


def run_torture(base: Path, plan: Plan, on_summary: Callable[[Run], None] | None = None) -> list[str]:
    """Execute and verify one run; returns the broken invariants (empty: nothing lost or damaged)."""
    run = Run(base, plan)
    run.execute()
    problems = run.verify()
    if on_summary is not None:
        on_summary(run)
    return problems
