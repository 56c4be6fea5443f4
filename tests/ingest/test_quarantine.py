"""Bad lines are quarantined (metadata only, private files) while their neighbours import."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import stat
from pathlib import Path

import pytest

from lcm_framework.ingest import QuarantineStore, QuarantineStoreError, import_sources, quarantine_path

from .support import claude_records, make_app


def _session_with_bad_lines(tmp_path: Path, proj: Path) -> tuple[Path, dict[int, str], list[bytes]]:
    good = [json.dumps(r).encode() for r in claude_records("q-1", str(proj), 3)]
    bad = {
        1: (b'{"type": "user", "message": {"role": "user", "content": "unterminated', "malformed-json"),
        3: (b'{"type":"user","note":"nul \x00 inside"}', "nul-character"),
        5: (b'{"type":"user","text":"caf\xe9 latin-1"}', "invalid-utf8"),
        7: (b"12345", "non-container-json"),
        9: (b'{"a": 1, "a": 2}', "malformed-json"),
        11: (b'{"big": 9007199254740993}', "malformed-json"),
        13: (b'{"huge": "' + b"x" * (10 * 1024 * 1024 + 10) + b'"}', "record-too-large"),
        15: (b"[" * 150 + b"]" * 150, "nesting-too-deep"),
    }
    lines: list[bytes] = []
    reasons: dict[int, str] = {}
    it = iter(good)
    for ordinal in range(len(good) + len(bad)):
        if ordinal in bad:
            lines.append(bad[ordinal][0])
            reasons[ordinal] = bad[ordinal][1]
        else:
            lines.append(next(it))
    path = tmp_path / "src" / "bad.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, reasons, lines


def test_bad_lines_are_quarantined_and_neighbours_import(tmp_path: Path, lcm_env: Path) -> None:
    proj = tmp_path / "p"
    path, reasons, lines = _session_with_bad_lines(tmp_path, proj)
    app = make_app(proj)
    try:
        report = import_sources(app, [path], batch_size=4)
        assert report.errors == []
        expected_counts: dict[str, int] = {}
        for reason in reasons.values():
            expected_counts[reason] = expected_counts.get(reason, 0) + 1
        assert report.quarantined == dict(sorted(expected_counts.items()))
        assert report.messages == 12 and report.stored == 12
        ref = app.project_ref(proj)
        with app.project(proj) as st:
            ordinals = [r.source_ordinal for r in st.native_transcripts.list_by_source("bad.jsonl")]
            cp = st.native_transcripts.get_checkpoint("claude-code:bad.jsonl")
        assert ordinals == [o for o in range(len(lines)) if o not in reasons]
        assert cp is not None and cp.quarantined == len(reasons) and cp.byte_offset == path.stat().st_size
        with QuarantineStore(ref.project_id, "claude-code", app.config.home) as q:
            rows = q.list()
        assert [(e.locator, e.ordinal, e.reason) for e in rows] == [
            ("bad.jsonl", o, r) for o, r in sorted(reasons.items())]
        assert all(e.sha256 == hashlib.sha256(lines[e.ordinal]).hexdigest() for e in rows)
        # a re-run neither duplicates quarantine rows nor re-imports anything
        again = import_sources(app, [path], batch_size=4)
        assert again.records == 0
        with QuarantineStore(ref.project_id, "claude-code", app.config.home) as q:
            assert len(q.list()) == len(reasons)
        qpath = quarantine_path(ref.project_id, "claude-code", app.config.home)
        assert qpath == (lcm_env / "transcript-quarantine" / hashlib.sha256(ref.project_id.encode()).hexdigest()
                         / (hashlib.sha256(b"claude-code").hexdigest() + ".db"))
        assert stat.S_IMODE(qpath.stat().st_mode) == 0o600
        assert stat.S_IMODE(qpath.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(qpath.parent.parent.stat().st_mode) == 0o700
        data = b"".join(p.read_bytes() for p in qpath.parent.iterdir())
        for marker in (b"unterminated", b"latin-1", b"nul ", b"xxxxxxxxxxxxxxxx", b"9007199254740993"):
            assert marker not in data  # metadata only, never the payload
    finally:
        app.close()


def test_quarantine_schema_is_versioned_and_drift_fails_closed(tmp_path: Path) -> None:
    with QuarantineStore("proj", "codex", tmp_path) as store:
        assert store.add([("a.jsonl", 3, "malformed-json", "0" * 64)]) == 1
        assert store.add([("a.jsonl", 3, "malformed-json", "0" * 64)]) == 0
        with pytest.raises(QuarantineStoreError):
            store.add([("a.jsonl", 4, "made-up-reason", "0" * 64)])
    path = quarantine_path("proj", "codex", tmp_path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    db.execute("DROP INDEX quarantined_records_by_reason")
    db.commit()
    db.close()
    with QuarantineStore("proj", "codex", tmp_path) as store:  # only the managed index is repaired
        assert len(store.list()) == 1
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE quarantined_records ADD COLUMN payload TEXT")
    db.commit()
    db.close()
    with pytest.raises(QuarantineStoreError):
        QuarantineStore("proj", "codex", tmp_path)
    db = sqlite3.connect(quarantine_path("proj", "other", tmp_path))
    db.execute("PRAGMA user_version = 7")
    db.close()
    with pytest.raises(QuarantineStoreError):
        QuarantineStore("proj", "other", tmp_path)
