"""``lcm_framework.sqlite_files``: private database files, refused paths, and the doctor's quick check."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from lcm_framework.sqlite_files import UnsafeDatabaseFile, create_private, open_private, quick_check


def test_a_new_database_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    previous = os.umask(0o277)  # would leave the owner read-only
    try:
        create_private(folder / "lcm.db")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((folder / "lcm.db").stat().st_mode) == 0o600
    assert [p.name for p in folder.iterdir()] == ["lcm.db"]  # no temporary name left behind


def test_a_symlink_is_refused_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.db").touch()
    (tmp_path / "lcm.db").symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(UnsafeDatabaseFile) as caught:
        open_private(tmp_path / "lcm.db", 1.0)
    assert (str(caught.value), caught.value.code) == ("the database path is a symlink", "symlink")


def test_the_connection_serves_other_threads(tmp_path: Path) -> None:
    """The daemon hands a project's connection to its worker threads."""
    conn = open_private(tmp_path / "lcm.db", 1.0)
    found: list[object] = []
    worker = threading.Thread(target=lambda: found.append(conn.execute("PRAGMA journal_mode").fetchone()[0]))
    worker.start()
    worker.join()
    conn.close()
    assert found == ["wal"]


def test_quick_check_tells_a_damaged_file_from_one_it_cannot_open(tmp_path: Path) -> None:
    good = tmp_path / "good.db"
    sqlite3.connect(good).execute("CREATE TABLE t (x)").connection.close()
    assert quick_check(good, 1.0) == ("ok", "quick_check ok")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not an SQLite database, only text " * 200)
    assert quick_check(junk, 1.0) == ("corrupt", "the file is damaged or not a database")
    status, detail = quick_check(tmp_path / "missing.db", 1.0)
    assert status == "unavailable" and detail.startswith("could not be checked")


class _Converting:
    """A connection whose WAL conversion reports busy ``busy`` times (a concurrent opener converting)."""

    def __init__(self, busy: int, code: int = sqlite3.SQLITE_BUSY) -> None:
        self.busy, self.code, self.calls = busy, code, 0

    def execute(self, sql: str) -> _Converting:
        self.calls += 1
        if self.calls <= self.busy:
            error = sqlite3.OperationalError("database is locked")
            error.sqlite_errorcode = self.code  # type: ignore[attr-defined]
            raise error
        return self

    def fetchall(self) -> list[tuple[str]]:
        return [("wal",)]


def test_wal_conversion_is_retried_while_busy_and_only_then() -> None:
    from lcm_framework.sqlite_files import enable_wal

    busy = _Converting(3)
    enable_wal(busy, 5.0)  # type: ignore[arg-type]
    assert busy.calls == 4
    extended = _Converting(1, code=sqlite3.SQLITE_BUSY | (1 << 8))  # SQLITE_BUSY_RECOVERY: an extended busy code
    enable_wal(extended, 5.0)  # type: ignore[arg-type]
    assert extended.calls == 2
    broken = _Converting(1, code=sqlite3.SQLITE_IOERR)
    with pytest.raises(sqlite3.OperationalError):
        enable_wal(broken, 5.0)  # type: ignore[arg-type]
    assert broken.calls == 1  # another error is not retried
    stuck = _Converting(10**9)
    with pytest.raises(sqlite3.OperationalError):
        enable_wal(stuck, 0.05)  # type: ignore[arg-type]
