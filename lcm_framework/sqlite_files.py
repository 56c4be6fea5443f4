"""Opening a private SQLite file without ever breaking the locks of another connection of the process.

POSIX advisory locks belong to the process, not to the descriptor: closing any
descriptor of a file drops every lock the process holds on it, including those
of SQLite connections that are still open ("How To Corrupt An SQLite Database
File", section 2.2). Another process then believes it is the last user,
checkpoints and deletes the WAL under the first one. So nothing here opens a
descriptor of a database, ``-wal``, ``-shm`` or ``-journal`` file: a new file is
made under a temporary name, closed, and linked into place; the checks that the
path is a regular file, not a symlink, and still names the file SQLite opened
use ``lstat`` and ``PRAGMA database_list`` instead of a descriptor.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import stat
import time
from pathlib import Path

FILE_MODE = 0o600
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class UnsafeDatabaseFile(OSError):
    """The path is a symlink or not a regular file, or it changed while SQLite opened it."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def create_private(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless something exists there.

    The file is made and closed under a temporary name, then hard-linked into
    place (atomic, and it fails if another process got there first), so no
    descriptor of it is open once SQLite can see it.
    """
    if os.path.lexists(path):
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.new")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


def _regular(path: Path) -> os.stat_result:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeDatabaseFile("the database path is a symlink", "symlink")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeDatabaseFile("the database path is not a regular file", "not_regular")
    return st


def open_private(path: Path, timeout_s: float, *, wal: bool = True, page_size: int | None = None
                 ) -> sqlite3.Connection:
    """Connect to ``path`` (created 0600 when missing), refusing symlinks and swapped files.

    Raises ``UnsafeDatabaseFile`` or another ``OSError`` for the file, ``sqlite3.Error`` from the driver.
    With ``wal`` the connection is switched to WAL (see ``enable_wal``). ``page_size`` applies to a file
    that holds no table yet (SQLite fixes a database's page size with its first table, and a WAL
    database keeps it for good).
    """
    create_private(path)
    before = _regular(path)
    conn = sqlite3.connect(str(path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
    try:
        opened = conn.execute("PRAGMA database_list").fetchone()[2]
        if not os.path.samestat(before, _regular(path)) or not os.path.samestat(before, os.stat(opened)):
            raise UnsafeDatabaseFile("the database file changed while it was opened", "path_changed")
        if stat.S_IMODE(before.st_mode) != FILE_MODE:
            os.chmod(path, FILE_MODE)
        if page_size is not None:
            conn.execute(f"PRAGMA page_size = {int(page_size)}")
        if wal:
            enable_wal(conn, timeout_s)
        for suffix in SIDE_SUFFIXES:
            side = path.with_name(path.name + suffix)
            try:
                if stat.S_IMODE(os.lstat(side).st_mode) != FILE_MODE:
                    os.chmod(side, FILE_MODE)
            except FileNotFoundError:
                pass
    except BaseException:
        conn.close()
        raise
    return conn


def enable_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """``PRAGMA journal_mode = WAL``, retried for up to ``timeout_s``.

    Converting a new file takes an exclusive lock, and SQLite reports a
    concurrent opener's conversion as busy at once, without its busy handler.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchall()  # finished: a statement left open locks out others
            return
        except sqlite3.OperationalError as exc:
            if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in _BUSY_CODES or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def quick_check(path: Path, timeout_s: float) -> tuple[str, str]:
    """``PRAGMA quick_check`` over a read-only connection: (``ok`` | ``corrupt`` | ``unavailable``, detail)."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=timeout_s)
        try:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in CORRUPT_CODES:
            return "corrupt", "the file is damaged or not a database"
        return "unavailable", f"could not be checked ({type(exc).__name__})"
    if problems == ["ok"]:
        return "ok", "quick_check ok"
    return "corrupt", f"quick_check found {len(problems)} problem(s)"
