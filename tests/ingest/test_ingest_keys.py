"""Ingest key versions: current keys cluster per source; a source first stored with version 1 keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lcm_framework.ingest import engine, import_sources
from lcm_framework.ingest.state import KEY_VERSION, CheckpointState, IngestKeys, key_version
from lcm_framework.storage.models import FormatIdentity

from .support import claude_records, make_app, write_jsonl

FMT = FormatIdentity("claude-code", "claude-jsonl", "v1")


def test_keys_of_one_source_share_a_prefix_and_stay_distinct() -> None:
    keys = IngestKeys(FMT, "s", "a.jsonl")
    other = IngestKeys(FMT, "s", "b.jsonl")
    assert keys.version == KEY_VERSION == 2
    made = [keys.key(f"{n:064x}", occurrence) for n in range(50) for occurrence in range(2)]
    assert len(set(made)) == len(made) and all(len(k) == 64 for k in made)
    assert {k[:32] for k in made} == {keys.key("0" * 64, 0)[:32]}
    assert other.key("0" * 64, 0)[:32] != made[0][:32]
    assert IngestKeys(FMT, "s", "a.jsonl").key("1" * 64, 3) == keys.key("1" * 64, 3)  # deterministic
    v1 = IngestKeys(FMT, "s", "a.jsonl", 1)
    assert len({v1.key(f"{n:064x}", 0)[:32] for n in range(10)}) == 10  # version 1: one hash, no prefix
    with pytest.raises(ValueError):
        IngestKeys(FMT, "s", "a.jsonl", 3)


def _keys(app: object, proj: Path, session: str) -> list[str]:
    with app.project(proj) as st:  # type: ignore[attr-defined]
        return [r.ingest_key for r in st.native_transcripts.list_by_native_session(session)]


def test_a_source_first_imported_with_version_1_keys_keeps_them(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A rescan (here: new scrubber rules) of a source stored before key versions existed must find
    its records under their version 1 keys, not store them again under version 2 keys."""
    proj = tmp_path / "proj"
    src = write_jsonl(tmp_path / "src" / "s.jsonl", claude_records("legacy", str(proj), 6))
    app = make_app(proj)
    with monkeypatch.context() as old:  # what a release before key versions wrote
        old.setattr(engine, "key_version", lambda _cp: 1)
        legacy_json = CheckpointState.to_json

        def without_version(state: CheckpointState) -> str:
            data = json.loads(legacy_json(state))
            del data["key_version"]
            return json.dumps(data, sort_keys=True, separators=(",", ":"))

        old.setattr(CheckpointState, "to_json", without_version)
        assert import_sources(app, [src]).errors == []
    app.close()
    stored = _keys(make_app(proj), proj, "legacy")
    assert len({k[:32] for k in stored}) == len(stored)  # version 1 keys

    (proj / ".lcm").mkdir(exist_ok=True)
    app = make_app(proj, **{"security.sensitive_patterns": ["zz-not-in-the-data-[0-9]+"]})
    try:
        with app.project(proj) as st:
            cp = st.native_transcripts.get_checkpoint("claude-code:s.jsonl")
        assert key_version(cp) == 1
        report = import_sources(app, [src])
        assert report.errors == [] and report.file_reports[0].rescanned
        assert (report.stored, report.skipped) == (0, len(stored))
        assert _keys(app, proj, "legacy") == stored
        write_jsonl(src, claude_records("legacy", str(proj), 2, start=6), mode="a")
        assert import_sources(app, [src]).stored == 8
        after = _keys(app, proj, "legacy")
        assert after[:len(stored)] == stored and len({k[:32] for k in after}) == len(after)
    finally:
        app.close()


def test_a_new_source_gets_current_keys(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    src = write_jsonl(tmp_path / "src" / "s.jsonl", claude_records("fresh", str(proj), 6))
    app = make_app(proj)
    try:
        assert import_sources(app, [src]).errors == []
        stored = _keys(app, proj, "fresh")
        assert len(stored) == 24 and len({k[:32] for k in stored}) == 1
        with app.project(proj) as st:
            cp = st.native_transcripts.get_checkpoint("claude-code:s.jsonl")
        assert key_version(cp) == KEY_VERSION and json.loads(cp.state_json)["key_version"] == KEY_VERSION
    finally:
        app.close()
