"""Every write LCM makes outside its database (spec: "Portable durable file writes").

Three rules, one module:

* **Directories.** ``ensure_private_dir`` creates what is missing with mode 0700 and tightens an
  existing directory to 0700 only when it is ``LCM_HOME`` or lies inside it (resolved) and belongs to us.
  A directory outside ``LCM_HOME`` that LCM did not create (``/tmp``, a project folder, the target of a
  symlink under the home) keeps its mode.
* **LCM's own files** (``atomic_write_private``): the content goes to a temporary file in the destination
  directory, is fully written, fsynced and tightened to 0600, then published: with ``require_absent``
  through an exclusive same-directory hard link (no clobber, ``FileExistsError`` when the name exists),
  otherwise through an atomic rename after a safety preflight of the existing destination. The directory
  is fsynced after publication. Cooperating LCM writers only: this makes no claim against a same-UID
  process replacing the file between the preflight and the rename.
* **Files a user names** (``write_output``, e.g. ``lcm export -o PATH``): written the same way beside the
  target; a symbolic link (dangling or not) or a non-regular file at the path is refused, and an existing
  file is replaced only with ``replace=True`` (``--force``). The path is never resolved before the check.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import LcmError
from .paths import lcm_home

MAX_REPLACE_BYTES = 1 << 30


class UnsafeDestinationError(LcmError):
    """The destination is a link, not a regular file, or exists when it may not be replaced."""

    exit_code = 2


def ensure_private_dir(path: Path, *, home: Path | None = None) -> Path:
    """``path`` as a directory: missing components created 0700; tightened to 0700 when it already
    existed only if it is ``home`` (default ``LCM_HOME``) or inside it, and we own it."""
    missing: list[Path] = []
    probe = path
    while not probe.is_dir() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    created: set[Path] = set()
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # a concurrent writer made it: treat it as existing
        os.chmod(directory, 0o700)  # the umask may have taken the owner's bits
        created.add(directory)
    if path not in created and _inside(path, lcm_home() if home is None else home) and _owned(path):
        os.chmod(path, 0o700)
    return path


def _inside(path: Path, home: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(home)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _owned(path: Path) -> bool:
    return not hasattr(os, "geteuid") or os.stat(path).st_uid == os.geteuid()


def atomic_write_private(path: Path, data: bytes, *, require_absent: bool = False,
                         home: Path | None = None) -> None:
    """Durably publish ``data`` at ``path`` (one of LCM's own files) with mode 0600 (see the module docstring)."""
    directory = ensure_private_dir(path.parent, home=home)
    if not require_absent:
        _preflight(path)
    _publish(directory, path, data, exclusive=require_absent)


def check_output(path: Path, *, replace: bool = False) -> bool:
    """Whether a file exists at ``path``, a path the user named (checked before any work is done);
    UnsafeDestinationError for a symbolic link (dangling or not) or a non-regular file there, or for an
    existing file without ``replace``."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeDestinationError(f"{path} is a symbolic link: name the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeDestinationError(f"{path} exists and is not a regular file")
    if not replace:
        raise UnsafeDestinationError(f"{path} already exists: pass --force to replace it")
    return True


def write_output(path: Path, data: bytes, *, replace: bool = False) -> None:
    """Publish ``data`` (mode 0600) at a path the user named, after ``check_output``."""
    exists = check_output(path, replace=replace)
    try:
        _publish(ensure_private_dir(path.parent), path, data, exclusive=not exists)
    except FileExistsError:
        raise UnsafeDestinationError(f"{path} appeared while it was being written: not replaced") from None
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def _cannot_write(path: Path, exc: OSError) -> LcmError:
    return LcmError(f"cannot write {path}: {exc.strerror or type(exc).__name__}")


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


def _publish(directory: Path, path: Path, data: bytes, *, exclusive: bool) -> None:
    """Write ``data`` to a temporary file in ``directory``, then link (``exclusive``) or rename it to ``path``."""
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        if exclusive:
            os.link(temp, path)
        else:
            os.replace(temp, path)
        _fsync_dir(directory)
    finally:
        try:
            temp.unlink()
        except FileNotFoundError:
            pass


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
