"""Simulated machines of the team-sync tests: each its own LCM_HOME, machine identity and project root, all
bound to one remote project in one PostgreSQL schema; a TCP proxy in front of the server to cut it off."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from lcm_framework.kernel.plugins import Plugins, build_plugins
from lcm_framework.outbox import Outbox, OutboxEvent, outbox_path
from tests.conftest import OFFLINE_ENV
from tests.postgres.support import TestDatabase

FAST_SYNC = {"sync.lease_ttl_s": "1", "sync.claim_ttl_s": "1", "sync.max_attempts": "3", "sync.retry_base_s": "0.1",
             "sync.interval_s": "0.2"}


@cache
def plugins() -> Plugins:
    return build_plugins()


@dataclass
class Machine:
    name: str
    home: Path
    root: Path
    url: str
    schema: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """The environment of this machine's ``lcm`` processes."""
        values = {"LCM_HOME": str(self.home), "LCM_STORAGE_BACKEND": "postgresql", "LCM_POSTGRES_URL": self.url,
                  "LCM_POSTGRES_ALLOW_PLAINTEXT": "true", "LCM_POSTGRESQL_SCHEMA": self.schema,
                  "LCM_POSTGRESQL_ACQUIRE_TIMEOUT_S": "1",
                  **{"LCM_" + k.upper().replace(".", "_"): v for k, v in FAST_SYNC.items()}}
        return {**values, **self.extra}

    def config(self) -> Any:
        from lcm_framework.config import load_config

        return load_config(project=self.root, env={**self.env, "HOME": str(self.home.parent)}, plugins=plugins())

    def capture(self, count: int, *, session: str = "s", files: tuple[str, ...] = ("src/a.py",),
                poison: bool = False) -> list[OutboxEvent]:
        """``count`` PostToolUse events of this machine (``poison``: one the inbox can never apply)."""
        out = []
        with Outbox(outbox_path(self.home)) as box:
            for n in range(count):
                facts: dict[str, Any] = {"tool": "Edit", "status": "ok",
                                         "files": [""] if poison else [str(self.root / f) for f in files]}
                out.append(box.capture("PostToolUse", {"session_id": f"{self.name}-{session}", "agent": "claude",
                                                       "project": str(self.root), "tool_facts": facts, "n": n}))
        return out

    def events(self) -> list[OutboxEvent]:
        path = outbox_path(self.home)
        if not path.exists():
            return []
        with Outbox(path) as box:
            return box.events()

    def lcm(self, *args: str, env: dict[str, str] | None = None, timeout: float = 60,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", *args], cwd=self.root, input=input_text,
                              env={**os.environ, **OFFLINE_ENV, **self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)


def make_machines(db: TestDatabase, schema: str, base: Path, url: str, names: tuple[str, ...] = ("a", "b")
                  ) -> list[Machine]:
    """Machines with registered identities, their roots bound to one new remote project."""
    from lcm_postgres import identity, migrate

    machines = []
    for name in names:
        root = (base / name / "work" / "proj").resolve()
        (root / ".git").mkdir(parents=True)
        machines.append(Machine(name, base / name / "lcm-home", root, url, schema))
    with db.connect() as conn:
        migrate.run(conn, schema)
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(f'SET LOCAL search_path = "{schema}"')
            project_uuid = None
            for machine in machines:
                found = identity.create_local_machine(machine.home, machine.name)
                identity.register_machine(cur, found)
                if project_uuid is None:
                    project_uuid = identity.create_project(cur, found, "team")
                identity.bind(cur, found, str(machine.root), project_uuid)
                identity.save_binding(machine.home, str(machine.root), project_uuid)
    return machines


def inbox_rows(db: TestDatabase, schema: str) -> dict[str, tuple[str, str, int]]:
    """event uuid -> (state, machine, seq) of every inbox row."""
    with db.connect() as conn:
        rows = conn.execute(f'SELECT event_uuid::text, state, machine_id, seq FROM "{schema}".passive_event_inbox')
        return {u: (s, m, q) for u, s, m, q in rows.fetchall()}


def log_rows(db: TestDatabase, schema: str) -> list[tuple[str, str, int, int]]:
    """(event uuid, machine, seq, applied order) of every log entry, in applied order."""
    with db.connect() as conn:
        rows = conn.execute(f'SELECT event_uuid::text, machine_id, seq, applied_order FROM "{schema}".'
                            "passive_event_log ORDER BY applied_order")
        return [(u, m, q, o) for u, m, q, o in rows.fetchall()]


def check_invariants(db: TestDatabase, schema: str, machines: list[Machine], *, final: bool,
                     replayed: Collection[str] = ()) -> None:
    """Exactly once and in per-machine order so far (but the events an operator replayed from the inbox's
    quarantine: applied when replayed, after their machine's later events); nothing pruned before
    acknowledgement; after a full drain (``final``), every deliverable event applied (or quarantined, with
    its reason) and pruned."""
    inbox = inbox_rows(db, schema)
    log = log_rows(db, schema)
    logged = [u for u, _m, _s, _o in log]
    assert len(logged) == len(set(logged)), "an event was applied twice"
    for machine_id in {m for _u, m, _s, _o in log}:
        seqs = [s for u, m, s, _o in log if m == machine_id and u not in replayed]
        assert seqs == sorted(seqs), f"machine {machine_id} applied out of order: {seqs}"
    for machine in machines:
        for event in machine.events():
            in_inbox = event.uuid in inbox
            if event.delivery in ("pending", "claimed", "retry"):
                continue  # an uncertain insertion may have landed: the next delivery's readback confirms it
            if event.delivery == "delivered":
                assert in_inbox, f"{event.uuid} pruned before acknowledgement"
            if event.delivery in ("acknowledged", "remote_pruned"):
                assert event.uuid in logged, f"{event.uuid} acknowledged but not applied"
            if event.delivery == "quarantined" and event.delivered_at is not None:
                assert inbox[event.uuid][0] == "quarantined" and event.delivery_error
            if final:
                assert event.delivery in ("remote_pruned", "quarantined"), (event.seq, event.delivery)
                assert (event.delivery == "remote_pruned") == (event.uuid in logged)
                assert in_inbox == (event.delivery == "quarantined" and event.delivered_at is not None)


class Proxy:
    """A TCP forwarder to the PostgreSQL server on a port of its own; ``stop`` cuts every connection and
    refuses new ones (the server itself keeps running), ``start`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            except OSError:
                pass
            listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if self._listener is not listener:  # stopped meanwhile
                client.close()
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@contextmanager
def proxy_to(url: str) -> Iterator[Proxy]:
    parts = urlsplit(url)
    proxy = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


def killed(done: subprocess.CompletedProcess[str]) -> bool:
    return done.returncode == -signal.SIGKILL


def dump(done: subprocess.CompletedProcess[str]) -> str:
    return json.dumps({"rc": done.returncode, "out": done.stdout[-2000:], "err": done.stderr[-2000:]})


def drain_in_child(machine: Machine, checkpoint: str | None = None, *, timeout: float = 60) -> int | None:
    """Run ``machine``'s drain worker (``lcm sync drain``'s code) in a forked child process, killed at
    ``checkpoint`` if given; its exit code (``-SIGKILL`` when killed). Forking from this process, which has
    loaded LCM already, keeps the many crash runs cheap."""
    import multiprocessing

    child = multiprocessing.get_context("fork").Process(target=_child_drain, args=(machine, checkpoint))
    child.start()
    child.join(timeout)
    if child.exitcode is None:
        child.kill()
        child.join(10)
    return child.exitcode


def _child_drain(machine: Machine, checkpoint: str | None) -> None:
    from lcm_framework.app import App
    from lcm_framework.sync.killpoints import ENV
    from lcm_framework.sync.projects import AppProjects, StandaloneApps
    from lcm_framework.sync.worker import DrainSettings, DrainWorker

    code = 1
    try:
        env = {**os.environ, **machine.env, **({ENV: checkpoint} if checkpoint else {})}
        config = machine.config()
        app = App(config, plugins())
        projects = AppProjects(StandaloneApps(app).app_for, lambda: [str(machine.root)])
        DrainWorker(machine.home, projects, DrainSettings.from_config(config), env=env).drain()
        projects.close()
        app.close()
        code = 0
    finally:
        os._exit(code)  # never the parent's (pytest's) exit handlers
