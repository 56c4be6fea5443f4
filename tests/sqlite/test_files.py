"""On-disk layout: private modes, WAL, versioned schema, ProjectRef stored in the database."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

from lcm_sqlite import connection, schema

from lcm_framework.storage.checked import storage_driver
from lcm_framework.storage.models import NewMessage, Role

from .conftest import MakeFactory, db_path, ref


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_modes_wal_and_user_version(make_factory: MakeFactory, tmp_path: Path) -> None:
    project = make_factory().open_project(ref())
    conv = project.conversations.create_conversation("s")
    project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "x", 1)])
    path = db_path(tmp_path, ref())
    assert mode(path.parent) == 0o700
    assert mode(path.parent.parent) == 0o700
    assert mode(tmp_path / "home") == 0o700
    for name in ("lcm.db", "lcm.db-wal", "lcm.db-shm"):
        assert mode(path.with_name(name)) == 0o600, name
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST == len(schema.MIGRATIONS)
        assert raw.execute("PRAGMA page_size").fetchone()[0] == connection.PAGE_BYTES
    finally:
        raw.close()
    project.close()


def _older_database(make_factory: MakeFactory, tmp_path: Path) -> tuple[Path, list[str]]:
    """A database an older version created with 4 KiB pages (and no incremental auto-vacuum), with messages."""
    path = db_path(tmp_path, ref())
    path.parent.mkdir(parents=True, mode=0o700)
    path.parent.parent.chmod(0o700)
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA page_size = 4096")
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute("CREATE TABLE older (x)")
    raw.close()
    path.chmod(0o600)
    project = make_factory().open_project(ref())
    conv = project.conversations.create_conversation("s")
    texts = [f"kept {n} " * 100 for n in range(50)]
    project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, t, 1) for t in texts])
    project.close()
    return path, texts


def _pages(path: Path) -> tuple[int, str]:
    raw = sqlite3.connect(path)
    try:
        return raw.execute("PRAGMA page_size").fetchone()[0], raw.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        raw.close()


def test_an_existing_database_keeps_its_page_size_until_vacuum(make_factory: MakeFactory, tmp_path: Path) -> None:
    path, texts = _older_database(make_factory, tmp_path)
    assert _pages(path) == (4096, "wal")
    project = make_factory().open_project(ref())
    report = project.compact_storage()
    assert f"4096-byte pages made {connection.PAGE_BYTES}" in report.detail
    assert [m.content for m in project.conversations.list_messages(1)] == texts
    project.close()
    assert _pages(path) == (connection.PAGE_BYTES, "wal")


def test_vacuum_leaves_the_page_size_while_another_connection_has_the_database_open(
        make_factory: MakeFactory, tmp_path: Path) -> None:
    """A hook or the daemon may hold the database open: the journal cannot leave WAL then, so the page size
    stays, vacuum still does the rest, and the next one gives pages back incrementally."""
    path, texts = _older_database(make_factory, tmp_path)
    other = sqlite3.connect(path)
    try:
        other.execute("SELECT count(*) FROM messages").fetchone()
        project = make_factory().open_project(ref())
        report = project.compact_storage()
        assert "pages made" not in report.detail
        assert [m.content for m in project.conversations.list_messages(1)] == texts
        again = project.compact_storage()  # incremental now: no second full VACUUM that blocks writers
        assert "incremental step" in again.detail
        project.close()
    finally:
        other.close()
    assert _pages(path) == (4096, "wal")

def test_existing_loose_modes_are_tightened(make_factory: MakeFactory, tmp_path: Path) -> None:
    factory = make_factory()
    factory.open_project(ref()).close()
    path = db_path(tmp_path, ref())
    path.chmod(0o644)
    path.parent.chmod(0o755)
    factory.open_project(ref()).close()
    assert mode(path) == 0o600 and mode(path.parent) == 0o700


def test_list_projects_reads_the_stored_root(make_factory: MakeFactory, tmp_path: Path) -> None:
    factory = make_factory()
    factory.open_project(ref("b")).close()
    factory.open_project(ref("a")).close()
    (tmp_path / "home" / "projects" / "stray-dir").mkdir()
    assert factory.list_projects() == [ref("a"), ref("b")]
    assert make_factory().list_projects() == [ref("a"), ref("b")]


def test_busy_timeout_comes_from_config(make_factory: MakeFactory, tmp_path: Path) -> None:
    project = make_factory(**{"storage.busy_timeout_ms": 1234}).open_project(ref())
    timeout = storage_driver(project)._scope.db.run(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0], "test")
    assert timeout == 1234
    project.close()


def test_reopen_does_not_rerun_migrations(make_factory: MakeFactory, tmp_path: Path) -> None:
    """An up-to-date database opens without a write: it opens while another process holds the write lock."""
    make_factory().open_project(ref()).close()
    path = db_path(tmp_path, ref())
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # what a migration (or any other write) would wait for
        project = make_factory(**{"storage.busy_timeout_ms": 50}).open_project(ref())
        tables = {r[0] for r in writer.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert {"conversations", "messages", "native_records", "checkpoints", "messages_fts"} <= tables
    conv = project.conversations.create_conversation("s")  # the reopened storage works
    assert project.conversations.get_conversation(conv.conversation_id) is not None
    project.close()
