"""Several scopes of one project in a process while other processes commit: no lock is dropped.

Closing any descriptor of a database file drops the POSIX locks of every connection of the process;
the next process to close then checkpoints and deletes the WAL under it, and writes are lost.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lcm_framework.sqlite_files import UnsafeDatabaseFile, create_private, open_private
from lcm_framework.storage.models import NewMessage, Role
from tests.procfs import deleted_database_files

from .conftest import MakeFactory, db_path, ref

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from lcm_framework.config import load_config
    from lcm_framework.kernel.plugins import build_plugins
    from lcm_framework.storage.models import NewMessage, ProjectRef, Role
    from lcm_framework.storage.selection import open_backend

    home, project_id, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    plugins = build_plugins()
    factory = open_backend(load_config(env={"LCM_HOME": home}, project=Path(home), plugins=plugins), "sqlite",
                           plugins=plugins)
    storage = factory.open_project(ProjectRef(project_id, "/code/proj"))
    conv = storage.conversations.get_or_create_conversation("shared")
    for i in range(count):
        storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, f"{tag}{i}", 1)])
    factory.close()
""")


def _writer(home: Path, tag: str, count: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", WRITER, str(home), ref().project_id, tag, str(count)], env=env)


def test_two_scopes_in_one_process_keep_their_locks(make_factory: MakeFactory, tmp_path: Path) -> None:
    home = tmp_path / "home"
    factory = make_factory()
    first = factory.open_project(ref())
    conv = first.conversations.get_or_create_conversation("shared")
    first.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "a0", 1)])
    second = factory.open_project(ref())  # the second open used to drop the first one's locks
    assert _writer(home, "b", 30).wait(120) == 0  # commits, closes and believes it was the last user
    assert deleted_database_files(os.getpid()) == []
    concurrent = _writer(home, "c", 30)
    for i in range(1, 31):
        first.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, f"a{i}", 1)])
    assert concurrent.wait(120) == 0
    assert deleted_database_files(os.getpid()) == []
    second.close()
    first.close()

    again = make_factory().open_project(ref())
    contents = {m.content for m in again.conversations.list_messages(conv.conversation_id)}
    assert contents == {f"{tag}{i}" for tag in "bc" for i in range(30)} | {f"a{i}" for i in range(31)}
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        raw.close()


def test_a_new_file_is_private_and_never_replaces_one_already_there(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "x.db"
    path.parent.mkdir()
    create_private(path)
    assert path.stat().st_mode & 0o777 == 0o600 and path.stat().st_size == 0
    path.write_bytes(b"kept")
    create_private(path)
    assert path.read_bytes() == b"kept"
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.db"]  # no temporary name left behind


def test_a_symlinked_database_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    sqlite3.connect(target).close()
    link = tmp_path / "lcm.db"
    link.symlink_to(target)
    with pytest.raises(UnsafeDatabaseFile) as info:
        open_private(link, 1)
    assert info.value.code == "symlink"
    dangling = tmp_path / "dangling.db"
    dangling.symlink_to(tmp_path / "missing.db")
    with pytest.raises(UnsafeDatabaseFile):
        open_private(dangling, 1)
    assert not (tmp_path / "missing.db").exists()


def test_loose_modes_of_an_existing_file_and_its_wal_are_tightened(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    conn = open_private(path, 1)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    path.chmod(0o644)
    conn = open_private(path, 1)
    try:
        conn.execute("INSERT INTO t VALUES (1)")
        for name in ("x.db", "x.db-wal", "x.db-shm"):
            assert (tmp_path / name).stat().st_mode & 0o777 == 0o600, name
    finally:
        conn.close()
