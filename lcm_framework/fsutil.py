"""Private, durable, atomic file writes (spec: "Portable durable file writes").

The content goes to a temporary file in the destination directory, is fully
written, fsynced and tightened to 0600, then published: with
``require_absent`` through an exclusive same-directory hard link (no clobber,
``FileExistsError`` when the name exists), otherwise through an atomic rename
after a safety preflight of the existing destination. The directory is fsynced
after publication. Cooperating LCM writers only: this makes no claim against a
same-UID process replacing the file between the preflight and the rename.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import LcmError
from .paths import ensure_private_dir

MAX_REPLACE_BYTES = 1 << 30


class UnsafeDestinationError(LcmError):
    """The destination exists but is not a plain, private, singly linked file we own."""


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # platforms without directory handles (Windows)
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _preflight(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeDestinationError(f"{path.name} is not a regular file")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise UnsafeDestinationError(f"{path.name} is owned by another user")
    if info.st_nlink > 1:
        raise UnsafeDestinationError(f"{path.name} has more than one hard link")
    if info.st_size > MAX_REPLACE_BYTES:
        raise UnsafeDestinationError(f"{path.name} is larger than {MAX_REPLACE_BYTES} bytes")


def atomic_write_private(path: Path, data: bytes, *, require_absent: bool = False) -> None:
    """Durably publish ``data`` at ``path`` with mode 0600 (see the module docstring)."""
    directory = ensure_private_dir(path.parent)
    if not require_absent:
        _preflight(path)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        if require_absent:
            os.link(temp, path)
        else:
            os.replace(temp, path)
        _fsync_dir(directory)
    finally:
        try:
            temp.unlink()
        except FileNotFoundError:
            pass
