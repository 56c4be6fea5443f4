"""Where the daemon keeps its token, pid and log under ``$LCM_HOME`` (cheap to import)."""

from __future__ import annotations

import os
from pathlib import Path

from ..safe_paths import ensure_private_dir

TOKEN_FILE = "daemon.token"
PID_FILE = "daemon.pid"
LOG_FILE = "daemon.log"


def token_path(home: Path) -> Path:
    return home / TOKEN_FILE


def pid_path(home: Path) -> Path:
    return home / PID_FILE


def log_path(home: Path) -> Path:
    return home / LOG_FILE


def read_token(home: Path) -> str | None:
    try:
        token = token_path(home).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return token or None


def ensure_token(home: Path) -> str:
    """The bearer token, created on first use in a 0600 file (never rewritten once present)."""
    existing = read_token(home)
    path = token_path(home)
    if existing is not None:
        os.chmod(path, 0o600)
        return existing
    import secrets

    ensure_private_dir(home)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    try:
        os.link(tmp, path)  # no-clobber: a concurrent first start keeps the winner's token
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return read_token(home) or token


def read_pid_file(home: Path) -> tuple[int, int | None] | None:
    """``(pid, port)`` from the pid file (port ``None`` in a file that names none); ``None`` when absent
    or unreadable."""
    try:
        fields = pid_path(home).read_text(encoding="utf-8").split()
        pid = int(fields[0])
        port = int(fields[1]) if len(fields) > 1 else None
    except (OSError, ValueError, IndexError):
        return None
    return (pid, port) if pid > 0 else None


def read_pid(home: Path, port: int | None = None) -> int | None:
    """The pid in the pid file (``pid port``); ``None`` when absent or, given ``port``, for another port."""
    recorded = read_pid_file(home)
    if recorded is None or (port is not None and recorded[1] is not None and recorded[1] != port):
        return None
    return recorded[0]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
