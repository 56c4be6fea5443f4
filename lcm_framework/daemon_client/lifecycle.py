"""Start (detached), stop and inspect the daemon process (cheap to import: the hook uses ``spawn``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..safe_paths import ensure_private_dir
from .client import DaemonClient, DaemonRequestError, DaemonUnavailable
from .files import log_path, pid_alive, pid_path, read_pid, read_pid_file


@dataclass(frozen=True, slots=True)
class DaemonState:
    running: bool
    healthy: bool
    pid: int | None
    port: int


def state(home: Path, port: int, *, timeout_s: float = 1.0) -> DaemonState:
    pid = read_pid(home, port)
    alive = pid is not None and pid_alive(pid)
    healthy = DaemonClient.for_home(home, port, timeout_s=timeout_s).alive()
    return DaemonState(running=alive or healthy, healthy=healthy, pid=pid if alive else None, port=port)


def another_daemon(home: Path, port: int) -> str | None:
    """Why no daemon of ``home`` may start on ``port`` (``None``: nothing stops it). One daemon per
    ``LCM_HOME``: a second one, on another port, would take over the pid file and hide the first from
    ``lcm daemon stop``."""
    recorded = read_pid_file(home)
    if recorded is None:
        return None
    pid, other_port = recorded
    if other_port is None or other_port == port or not pid_alive(pid):
        return None
    try:
        answered = DaemonClient.for_home(home, other_port, timeout_s=2.0).health().get("pid")
    except (DaemonUnavailable, DaemonRequestError):
        return None  # a stale pid file whose pid another process now has
    if answered != pid:
        return None
    return (f"a daemon of this LCM_HOME already runs on port {other_port} (pid {pid}): use that port, "
            f"or stop it first (lcm --set daemon.port={other_port} daemon stop)")


def spawn(home: Path, port: int, *, env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Launch ``lcm daemon start --foreground`` detached (new session, output to the log file), in ``env`` (the
    starting command's ``Config.child_env()``, so the daemon resolves its configuration), else this process's."""
    ensure_private_dir(home)
    log_file = log_path(home)
    fd = os.open(log_file, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "lcm_framework.cli.main", "--set", f"daemon.port={port}",
             "daemon", "start", "--foreground"],
            stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True, close_fds=True,
            env={**(os.environ if env is None else env), "LCM_HOME": str(home)}, cwd=str(home),
        )
    finally:
        os.close(fd)


def spawn_throttled(home: Path, port: int, *, every_s: float = 10.0) -> bool:
    """``spawn`` unless another hook did so in the last ``every_s`` seconds (hooks fire in bursts)."""
    stamp = home / "daemon.spawn"
    try:
        if time.time() - stamp.stat().st_mtime < every_s:
            return False
    except OSError:
        pass
    ensure_private_dir(home)
    stamp.touch()
    spawn(home, port)
    return True


def start_background(home: Path, port: int, *, env: Mapping[str, str] | None = None,
                     wait_s: float = 15.0) -> DaemonState:
    """Start the daemon (in ``env``: see ``spawn``) unless it runs; wait until ``/health`` answers. Raises
    RuntimeError on failure."""
    current = state(home, port)
    if current.healthy:
        return current
    refusal = another_daemon(home, port)
    if refusal is not None:
        raise RuntimeError(refusal)
    process = spawn(home, port, env=env)
    client = DaemonClient.for_home(home, port, timeout_s=0.5)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if client.alive():
            return state(home, port)
        code = process.poll()
        if code is not None:
            raise RuntimeError(f"the daemon exited with status {code} (see {log_path(home)})")
        time.sleep(0.05)
    raise RuntimeError(f"the daemon did not answer on 127.0.0.1:{port} within {wait_s:g} s (see {log_path(home)})")


def stop(home: Path, port: int, *, wait_s: float = 35.0) -> bool:
    """SIGTERM the daemon and wait for it to drain and exit; False when none was running."""
    pid = read_pid(home, port)
    if pid is None or not pid_alive(pid):
        owner = read_pid(home)
        if owner is None or not pid_alive(owner):  # absent, unreadable or stale; never a live daemon's on
            pid_path(home).unlink(missing_ok=True)  # another port
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not pid_alive(pid) or _zombie(pid):
            pid_path(home).unlink(missing_ok=True)
            return True
        time.sleep(0.05)
    raise RuntimeError(f"the daemon (pid {pid}) did not stop within {wait_s:g} s")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except (OSError, IndexError):
        return False
