"""Schema version 5: message text stored once (``texts``), parts and native payloads rebuilt from it.

``data/project-v4.db.gz`` was written by the schema-version-4 code (``lcm import`` of the bundled Claude
Code and Codex samples and a generated tool-heavy session, then ``lcm vacuum``: payloads and parts
compressed with a trained dictionary); ``data/project-v4.snapshot.json.gz`` is what that code read back.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lcm_sqlite import schema, texts

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.errors import StorageUnavailableError
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.paths import project_id_for
from lcm_framework.storage.models import (
    Checkpoint,
    FormatIdentity,
    NativeRecordInput,
    NewMessage,
    NewPart,
    PartKind,
    Role,
    SearchMode,
    SearchQuery,
)
from tests.ingest.support import snapshot
from tests.sqlite.conftest import MakeFactory, db_path, ref
from tests.sqlite.test_layout_migration import _plain

DATA = Path(__file__).parent / "data"
ROOT = "/tmp/v4proj"  # the project the fixture was written for


def _install(home: Path) -> Path:
    path = home / "projects" / project_id_for(ROOT) / "lcm.db"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(gzip.decompress((DATA / "project-v4.db.gz").read_bytes()))
    path.chmod(0o600)
    return path


def _expected() -> dict[str, Any]:
    return dict(json.loads(gzip.decompress((DATA / "project-v4.snapshot.json.gz").read_bytes())))


def _sessions(expected: dict[str, Any]) -> list[str]:
    return sorted({c["session"] for c in expected["conversations"]})


def _scalar(path: Path, sql: str) -> Any:
    raw = sqlite3.connect(path)
    try:
        return raw.execute(sql).fetchone()[0]
    finally:
        raw.close()


def test_a_version_4_database_migrates_record_by_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = _install(home)
    assert _scalar(path, "PRAGMA user_version") == 4
    before_bytes = _scalar(path, "SELECT sum(length(content)) FROM messages")
    expected = _expected()
    work = tmp_path / "work"
    work.mkdir()
    env = {"LCM_HOME": str(home)}
    app = App(load_config(project=work, env=env, plugins=build_plugins(env)), build_plugins(env))
    try:
        migrated = _plain(snapshot(app, ROOT, sessions=_sessions(expected)))
        storage = app.storage.open_project(app.project_ref(ROOT))
        try:  # the indexes were rebuilt over the view: words of long (moved) tool output are found
            assert storage.lexical_search.search(SearchQuery("overflow", limit=500))
            assert storage.lexical_search.search(SearchQuery("raise ValueError", SearchMode.SUBSTRING, limit=500))
        finally:
            storage.close()
    finally:
        app.close()
    assert json.loads(json.dumps(migrated, sort_keys=True)) == expected
    assert _scalar(path, "PRAGMA user_version") == schema.LATEST
    assert _scalar(path, "PRAGMA integrity_check") == "ok"
    assert _scalar(path, "SELECT count(*) FROM texts") > 10
    assert _scalar(path, "SELECT sum(length(content)) FROM messages") < before_bytes / 10
    assert _scalar(path, "SELECT count(*) FROM native_records WHERE payload_text_id IS NOT NULL") > 10
    assert _scalar(path, "SELECT count(*) FROM message_parts WHERE text_start IS NOT NULL") > 50
    assert "message_parts_v4" not in str(_scalar(path, "SELECT group_concat(name) FROM sqlite_master"))
    done = subprocess.run([sys.executable, "-m", "lcm_framework.cli.main", "verify", "--all-projects"], cwd=work,
                          env={**os.environ, **env}, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_failed_migration_check_leaves_version_4_untouched(tmp_path: Path, monkeypatch: Any) -> None:
    home = tmp_path / "home"
    path = _install(home)
    contents = _scalar(path, "SELECT sum(length(content)) FROM messages")
    real = texts.rebuild_part
    calls: list[int] = []

    def corrupting(*args: Any) -> tuple[str | None, str | None]:
        text, raw = real(*args)
        calls.append(1)
        return (text, (raw or "") + "!") if len(calls) == 50 else (text, raw)

    monkeypatch.setattr(texts, "rebuild_part", corrupting)
    work = tmp_path / "work"
    work.mkdir()
    env = {"LCM_HOME": str(home)}
    app = App(load_config(project=work, env=env, plugins=build_plugins(env)), build_plugins(env))
    try:
        with pytest.raises(StorageUnavailableError) as info:
            app.storage.open_project(app.project_ref(ROOT))
    finally:
        app.close()
    assert info.value.code == "migration_check" and len(calls) >= 50
    assert _scalar(path, "PRAGMA user_version") == 4
    assert _scalar(path, "SELECT sum(length(content)) FROM messages") == contents
    assert "texts" not in str(_scalar(path, "SELECT group_concat(name) FROM sqlite_master"))


def test_repeated_text_is_stored_once_and_goes_with_its_last_user(make_factory: MakeFactory,
                                                                   tmp_path: Path) -> None:
    output = "".join(f"line {i}: def handler_{i}(request): return render(request, 'page.html')\n"
                     for i in range(200))
    raw_json = json.dumps({"type": "tool_result", "tool_use_id": "t1", "content": output})
    part = NewPart(PartKind.TOOL_RESULT, text=output, tool_call_id="t1", raw_json=raw_json)
    storage = make_factory().open_project(ref())
    try:
        conv = storage.conversations.create_conversation("s").conversation_id
        first, second, third = storage.conversations.append_messages(
            conv, [NewMessage(Role.TOOL, output, 10, parts=(part,)) for _ in range(3)])
        payload = json.dumps({"type": "user", "message": {"content": [json.loads(raw_json)]}})
        record = NativeRecordInput("k" * 64, FormatIdentity("claude-code", "jsonl", "1"), "s", "s.jsonl", 0,
                                   payload, "d" * 64, "scrub-1", datetime(2026, 1, 1, tzinfo=UTC),
                                   third.message_id)
        storage.native_transcripts.ingest_batch([record], source_key="s", expected=None, new_checkpoint=Checkpoint(
            "s", 0, len(payload), "ab" * 32, "scrub-1", 0, 1, 0, 0, "{}"))
        path = db_path(tmp_path, ref())
        assert _scalar(path, "SELECT count(*) FROM texts") == 1
        assert _scalar(path, "SELECT payload_text_id IS NOT NULL FROM native_records") == 1
        parts = storage.conversations.list_parts([first.message_id, third.message_id])
        assert [p.raw_json for ps in parts.values() for p in ps] == [raw_json, raw_json]
        assert [p.text for ps in parts.values() for p in ps] == [output, output]
        assert storage.conversations.find_message_by_content(conv, "tool", output) == [first, second, third]

        storage.conversations.delete_messages([first.message_id, second.message_id])
        assert _scalar(path, "SELECT count(*) FROM texts") == 1
        storage.conversations.delete_messages([third.message_id])  # its native record still holds the text
        assert _scalar(path, "SELECT count(*) FROM texts") == 1
        (stored,) = storage.native_transcripts.list_by_native_session("s")
        assert stored.payload_json == payload and stored.message_id is None

        other = storage.conversations.append_messages(conv, [NewMessage(Role.USER, output + "!", 1)])
        storage.conversations.delete_messages([other[0].message_id])  # nothing else uses it: gone
        assert _scalar(path, "SELECT count(*) FROM texts") == 1
        assert storage.conversations.find_message_by_content(conv, "tool", output) == []
    finally:
        storage.close()
