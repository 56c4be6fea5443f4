"""Driver failures become typed errors that never show the database path, SQL or values."""

from __future__ import annotations

import sqlite3
import traceback
from pathlib import Path

import pytest

from lcm_framework.errors import StorageError, StorageUnavailableError
from lcm_framework.storage.checked import storage_driver
from lcm_framework.storage.models import NewMessage, Role

from .conftest import MakeFactory, db_path, ref


def assert_clean(exc: BaseException, tmp_path: Path) -> None:
    shown = "".join(traceback.format_exception(exc))
    assert str(tmp_path) not in str(exc) and "lcm.db" not in str(exc)
    assert str(tmp_path) not in shown.split("Traceback")[-1].splitlines()[-1]
    for leak in ("SELECT", "INSERT", "sqlite3.", "database is locked", "file is not a database"):
        assert leak not in str(exc)
    assert exc.__cause__ is None


def test_damaged_file_is_unavailable(make_factory: MakeFactory, tmp_path: Path) -> None:
    path = db_path(tmp_path, ref())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(StorageUnavailableError) as info:
        make_factory().open_project(ref())
    assert info.value.code == "corrupt" and info.value.project == ref().project_id
    assert_clean(info.value, tmp_path)
    assert path.read_bytes().startswith(b"this is not a database")


def test_busy_database_times_out_with_a_typed_error(make_factory: MakeFactory, tmp_path: Path) -> None:
    storage = make_factory(**{"storage.busy_timeout_ms": 50}).open_project(ref())
    conv = storage.conversations.create_conversation("s")
    blocker = sqlite3.connect(db_path(tmp_path, ref()), isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StorageUnavailableError) as info:
            storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "secret-value", 1)])
        assert info.value.code == "busy" and info.value.domain == "conversations"
        assert "secret-value" not in str(info.value)
        assert_clean(info.value, tmp_path)
        assert storage.conversations.list_conversations() == [conv]  # WAL readers are not blocked
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "ok", 1)])[0].seq == 0


def test_unusable_project_directory(make_factory: MakeFactory, tmp_path: Path) -> None:
    blocked = tmp_path / "home" / "projects" / ref().project_id
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the directory should be")
    with pytest.raises(StorageUnavailableError) as info:
        make_factory().open_project(ref())
    assert_clean(info.value, tmp_path)


def test_newer_schema_is_refused(make_factory: MakeFactory, tmp_path: Path) -> None:
    make_factory().open_project(ref()).close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StorageUnavailableError) as info:
        make_factory().open_project(ref())
    assert info.value.code == "schema_too_new"
    assert_clean(info.value, tmp_path)


def test_health_reports_damage_without_details(make_factory: MakeFactory, tmp_path: Path) -> None:
    storage = make_factory().open_project(ref())
    path = db_path(tmp_path, ref())
    storage_driver(storage)._scope.db.close()
    health = storage.health()
    assert not health.ok and health.state == "closed" and str(tmp_path) not in repr(health)
    assert path.exists()


def test_invalid_project_id_is_refused_before_touching_disk(make_factory: MakeFactory, tmp_path: Path) -> None:
    from lcm_framework.storage.models import ProjectRef

    for bad in ("../escape", "", "a/b", "x" * 200):
        with pytest.raises(StorageError):
            make_factory().open_project(ProjectRef(bad, "/r"))
    assert not (tmp_path / "escape").exists()


def test_symlinked_database_file_is_refused(make_factory: MakeFactory, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    path = db_path(tmp_path, ref())
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    with pytest.raises(StorageUnavailableError) as info:
        make_factory().open_project(ref())
    assert_clean(info.value, tmp_path)
    assert target.read_bytes() == b""


def test_a_damaged_page_reads_as_corrupt_not_io(make_factory: MakeFactory, tmp_path: Path) -> None:
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    storage.conversations.append_messages(
        conv.conversation_id, [NewMessage(Role.USER, f"message {i} " + "x" * 2000, 1) for i in range(200)])
    storage.close()
    path = db_path(tmp_path, ref())
    raw = sqlite3.connect(path)
    page_size = raw.execute("PRAGMA page_size").fetchone()[0]
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    with path.open("r+b") as fh:  # no connection of this process is open now
        for page in range(2, path.stat().st_size // page_size):
            fh.seek(page * page_size)
            fh.write(b"\xff" * 64)
    with pytest.raises(StorageError) as info:
        reopened = make_factory().open_project(ref())
        reopened.conversations.list_messages(conv.conversation_id)
    assert info.value.code == "corrupt"
    assert_clean(info.value, tmp_path)


def test_integrity_check_names_the_damaged_database(make_factory: MakeFactory, tmp_path: Path) -> None:
    factory = make_factory()
    for name in ("good", "bad"):
        factory.open_project(ref(name)).close()
    db_path(tmp_path, ref("bad")).write_bytes(b"this is not a database at all" * 200)
    checked = {h.project: h for h in factory.check_integrity()}
    assert checked[ref("good").project_id].state == "ok"
    bad = checked[ref("bad").project_id]
    assert not bad.ok and bad.state == "corrupt" and str(db_path(tmp_path, ref("bad"))) in (bad.detail or "")
    assert ref("bad") not in factory.list_projects()  # unreadable, so only the deep check can name it
