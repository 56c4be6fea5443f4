"""Start and stop a real daemon process for tests (free port, the test's own LCM_HOME)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import OFFLINE_ENV


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DaemonProcess:
    """``lcm daemon start --foreground`` as a child process."""

    def __init__(self, home: Path, port: int, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.port = port
        self.env = {**os.environ, **OFFLINE_ENV, "LCM_HOME": str(home), "LCM_DAEMON_PORT": str(port), **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def token(self) -> str:
        return (self.home / "daemon.token").read_text().strip()

    def start(self, timeout: float = 20.0) -> DaemonProcess:
        import httpx

        self.process = subprocess.Popen(
            [sys.executable, "-m", "lcm_framework.cli.main", "daemon", "start", "--foreground"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited: {self.process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{self.url}/health", timeout=0.5).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("daemon did not answer in time")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return self.process.returncode
