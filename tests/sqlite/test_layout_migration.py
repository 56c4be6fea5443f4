"""A project database written by the schema-version-1 code migrates to the compact layout losslessly.

``data/project-v1.db.gz`` was written by ``lcm import`` before schema version 2 (three generated sessions,
Claude Code and Codex); ``data/project-v1.snapshot.json.gz`` is what that code read back from it.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from lcm_sqlite import blocks, codec, maintenance, schema

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.errors import StorageUnavailableError
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.paths import project_id_for
from tests.ingest.support import snapshot

DATA = Path(__file__).parent / "data"
ROOT = "/tmp/v1proj"  # the project the fixture was written for
SESSIONS = ["claude-one", "claude-two", "codex-one"]


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _install_fixture(home: Path) -> Path:
    path = home / "projects" / project_id_for(ROOT) / "lcm.db"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(gzip.decompress((DATA / "project-v1.db.gz").read_bytes()))
    path.chmod(0o600)
    return path


CHECKPOINT_ROWS = "SELECT * FROM checkpoints ORDER BY source_key"


def test_a_version_1_database_migrates_record_by_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _install_fixture(home)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    checkpoints = raw.execute(CHECKPOINT_ROWS).fetchall()
    raw.close()
    work = tmp_path / "work"
    work.mkdir()
    env = {"LCM_HOME": str(home)}
    app = App(load_config(project=work, env=env, plugins=build_plugins(env)), build_plugins(env))
    try:
        migrated = _plain(snapshot(app, ROOT, sessions=SESSIONS))
        storage = app.storage.open_project(app.project_ref(ROOT))
        natives = [r for s in SESSIONS for r in storage.native_transcripts.list_by_native_session(s)]
        again = [storage.native_transcripts.get_by_id(r.transcript_id) for r in natives]
        storage.close()
    finally:
        app.close()
    expected = json.loads(gzip.decompress((DATA / "project-v1.snapshot.json.gz").read_bytes()))
    assert json.loads(json.dumps(migrated, sort_keys=True)) == expected
    assert len(natives) == 111 and again == natives
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # version 5 stores the payloads that hold their message's text without it
        assert raw.execute("SELECT count(*) FROM native_records WHERE payload_text_id IS NOT NULL").fetchone()[0] > 20
        # version 8 keeps the checkpoints in a rowid table (a WITHOUT ROWID row of theirs spilled to a page)
        assert len(checkpoints) == 3 and raw.execute(CHECKPOINT_ROWS).fetchall() == checkpoints
        table = raw.execute("SELECT sql FROM sqlite_schema WHERE name = 'checkpoints'").fetchone()[0]
        assert "WITHOUT ROWID" not in table
    finally:
        raw.close()


def test_a_failed_migration_check_leaves_version_1_untouched(tmp_path: Path, monkeypatch: Any) -> None:
    from lcm_sqlite import compact_layout

    home = tmp_path / "home"
    path = _install_fixture(home)
    calls = []
    real = compact_layout.pack_digest

    def corrupting_copy(value: str) -> str | bytes:  # the copy (2 calls a row) differs from the check
        calls.append(value)
        return value + "!" if len(calls) <= 2 * 111 else real(value)

    monkeypatch.setattr(compact_layout, "pack_digest", corrupting_copy)
    work = tmp_path / "work"
    work.mkdir()
    env = {"LCM_HOME": str(home)}
    app = App(load_config(project=work, env=env, plugins=build_plugins(env)), build_plugins(env))
    try:
        with pytest.raises(StorageUnavailableError) as info:
            app.storage.open_project(app.project_ref(ROOT))
    finally:
        app.close()
    assert info.value.code == "migration_check"
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
        assert raw.execute("SELECT count(*) FROM native_records").fetchone()[0] == 111
        assert "native_strings" not in {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    finally:
        raw.close()


@pytest.mark.parametrize("dictionary", ["own", "none", "declined"])
def test_vacuum_compresses_the_migrated_rows_and_reads_back_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      dictionary: str) -> None:
    """A project large enough gets a dictionary of its own (forced here, the fixture being small, with a
    dictionary small enough to pay for itself) and every row is rewritten with it; a small one keeps the
    shipped dictionary and only the rows without it are rewritten, also when it is asked to train one
    ("declined": a full-size dictionary would save less on the project's blocks than its own bytes)."""
    own_dictionary = dictionary == "own"
    if dictionary != "none":
        monkeypatch.setattr(maintenance, "VACUUM_TRAIN_BYTES", 0)
    if own_dictionary:
        monkeypatch.setattr(codec, "DICTIONARY_BYTES", 2048)
    home = tmp_path / "home"
    path = _install_fixture(home)
    work = tmp_path / "work"
    work.mkdir()
    env = {"LCM_HOME": str(home)}
    app = App(load_config(project=work, env=env, plugins=build_plugins(env)), build_plugins(env))
    try:
        storage = app.storage.open_project(app.project_ref(ROOT))
        before = storage.storage_usage()
        seen: list[int] = []
        report = storage.compact_storage(progress=seen.append)
        after = storage.storage_usage()
        storage.close()
        migrated = _plain(snapshot(app, ROOT, sessions=SESSIONS))
    finally:
        app.close()
    expected = json.loads(gzip.decompress((DATA / "project-v1.snapshot.json.gz").read_bytes()))
    assert json.loads(json.dumps(migrated, sort_keys=True)) == expected
    assert report.recompressed > (100 if own_dictionary else 0) and seen and seen[-1] == report.recompressed
    assert after.payload_bytes == before.payload_bytes
    assert after.stored_payload_bytes < (0.6 if own_dictionary else 1) * before.stored_payload_bytes
    assert report.bytes_after < report.bytes_before
    raw = sqlite3.connect(path)
    try:
        newest = "zstd:1" if own_dictionary else codec.SHIPPED
        used = {name for table in ("blocks", "message_parts")
                for (name,) in raw.execute(f"SELECT DISTINCT codec FROM {table}")}
        assert used - {None} == {newest}
        native = dict(raw.execute("SELECT payload_codec, count(*) FROM native_records GROUP BY 1"))
        assert set(native) <= {None, codec.BLOCK} and native[codec.BLOCK] > 100  # every compressed row in a block
        stored_texts = dict(raw.execute("SELECT codec, count(*) FROM texts GROUP BY 1"))
        assert set(stored_texts) <= {codec.BLOCK, newest}
        assert stored_texts[codec.BLOCK] > 3 * stored_texts.get(newest, 0)
        referenced = blocks.text_blocks(raw) | {b for (b,) in raw.execute(
            "SELECT payload_block FROM native_records WHERE payload_block IS NOT NULL")}
        assert {b for (b,) in raw.execute("SELECT block_id FROM blocks")} == referenced
        assert raw.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental from now on
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        raw.close()

