"""``lcm daemon stop`` stops the daemon of its port and leaves another port's daemon, pid file included; a
second daemon of one home, on another port, refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import OFFLINE_ENV
from tests.daemon.support import DaemonProcess, free_port


def _stop(home: Path, port: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "--set", f"daemon.port={port}", "daemon",
                           "stop"], env=env, capture_output=True, text=True, timeout=60)


def test_stop_for_another_port_keeps_the_running_daemons_pid_file(lcm_env: Path) -> None:
    daemon = DaemonProcess(lcm_env, free_port()).start()
    try:
        pid_file = lcm_env / "daemon.pid"
        recorded = pid_file.read_text()
        other = _stop(lcm_env, free_port())
        assert other.returncode == 0 and "not running" in other.stdout + other.stderr
        assert pid_file.read_text() == recorded  # the running daemon can still be found and stopped
        assert daemon.process is not None and daemon.process.poll() is None
        mine = _stop(lcm_env, daemon.port)
        assert mine.returncode == 0
        assert daemon.process.wait(30) == 0
        assert not pid_file.exists()
    finally:
        daemon.kill()


def _start(home: Path, port: int, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "--set", f"daemon.port={port}", "daemon",
                           "start", *extra], env=env, capture_output=True, text=True, timeout=60)


def test_a_second_daemon_of_the_same_home_on_another_port_refuses_to_start(lcm_env: Path) -> None:
    daemon = DaemonProcess(lcm_env, free_port()).start()
    try:
        pid_file = lcm_env / "daemon.pid"
        recorded = pid_file.read_text()
        other = free_port()
        for extra in (("--foreground",), ()):  # in this process, and detached as the hooks start it
            refused = _start(lcm_env, other, *extra)
            assert refused.returncode != 0
            assert f"already runs on port {daemon.port}" in refused.stderr, refused.stderr
            assert pid_file.read_text() == recorded
        assert daemon.process is not None and daemon.process.poll() is None
        assert _stop(lcm_env, daemon.port).returncode == 0 and daemon.process.wait(30) == 0
        started = _start(lcm_env, other)  # the home's daemon is gone: another port is fine now
        assert started.returncode == 0, started.stderr
        assert f"{other}" in pid_file.read_text()
        assert _stop(lcm_env, other).returncode == 0
    finally:
        daemon.kill()
