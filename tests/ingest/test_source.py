"""The source is bound to one descriptor: refused shapes, changes during a run, rewritten prefixes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lcm_framework.ingest import ProgressEvent, SourceRefusedError, import_sources, ingest_file
from lcm_framework.ingest.source import BoundSource, relative_locator

from .support import claude_records, make_app, snapshot, write_jsonl


def test_symlink_leaf_and_escaping_directory_are_refused(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    real = write_jsonl(tmp_path / "outside" / "real.jsonl", claude_records("s-1", str(proj), 1))
    src = tmp_path / "src"
    src.mkdir()
    (src / "link.jsonl").symlink_to(real)
    (src / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    app = make_app(proj)
    try:
        named = import_sources(app, [src / "link.jsonl"])
        assert named.file_reports[0].error is not None
        assert named.file_reports[0].error.code == "symlink_leaf"
        scanned = import_sources(app, [src])  # the symlinked directory is not followed out of the root
        codes = sorted(f.error.code for f in scanned.file_reports if f.error is not None)
        assert codes == ["symlink_leaf"] and scanned.stored == 0
    finally:
        app.close()
    with pytest.raises(SourceRefusedError) as outside:
        relative_locator(src, src / "escape" / "real.jsonl")
    assert outside.value.code == "outside_root"
    for bad in ("../real.jsonl", "/etc/passwd", "a\\b.jsonl", "C:/x.jsonl", "a//b", ""):
        with pytest.raises(SourceRefusedError):
            BoundSource(src, bad)


def _append_during_import(path: Path, extra: list[dict[str, object]], times: int) -> object:
    calls = {"n": 0}

    def progress(event: ProgressEvent) -> None:
        if event.kind == "bytes" and calls["n"] < times:
            calls["n"] += 1
            with path.open("a") as fh:
                fh.write(json.dumps(extra[calls["n"] - 1]) + "\n")

    return progress


def test_a_source_changed_mid_run_is_reopened_and_resumed(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    records = claude_records("s-2", str(proj), 10)
    path = write_jsonl(tmp_path / "s.jsonl", records[:30])
    app = make_app(proj)
    try:
        report = import_sources(app, [path], batch_size=5,
                                progress=_append_during_import(path, records[30:], 1))  # type: ignore[arg-type]
        assert report.errors == [] and report.records == 31
        assert ingest_file(app, path).status == "unchanged"
    finally:
        app.close()


def test_a_source_that_keeps_changing_fails_without_advancing_past_committed_batches(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    records = claude_records("s-3", str(proj), 10)
    path = write_jsonl(tmp_path / "s.jsonl", records[:20])
    app = make_app(proj)
    try:
        report = import_sources(app, [path], batch_size=5,
                                progress=_append_during_import(path, records[20:], 20))  # type: ignore[arg-type]
        (file_report,) = report.file_reports
        assert file_report.error is not None and file_report.error.code == "source_changed"
        with app.project(proj) as st:
            cp = st.native_transcripts.get_checkpoint("claude-code:s.jsonl")
            stored = st.native_transcripts.list_by_source("s.jsonl")
        assert cp is not None and cp.imported == len(stored) == file_report.stored
        assert cp.byte_offset == sum(len(json.dumps(r)) + 1 for r in records[: len(stored)])
        final = import_sources(app, [path], batch_size=5)
        assert final.errors == [] and final.file_reports[0].resumed_from == cp.byte_offset
        with app.project(proj) as st:
            assert len(st.native_transcripts.list_by_source("s.jsonl")) == len(path.read_text().splitlines())
    finally:
        app.close()


def test_rewritten_native_only_prefix_rescans_and_converges(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    records = claude_records("s-4", str(proj), 3)
    records.insert(2, {"type": "summary", "summary": "first title", "leafUuid": "u-1"})
    path = write_jsonl(tmp_path / "s.jsonl", records)
    app = make_app(proj)
    try:
        assert import_sources(app, [path], batch_size=4).errors == []
        before = snapshot(app, proj, sessions=["s-4"])
        records[2] = {"type": "summary", "summary": "second title", "leafUuid": "u-1"}
        write_jsonl(path, records)
        report = import_sources(app, [path], batch_size=4)
        (f,) = report.file_reports
        assert f.ok and f.rescanned and f.stored == 1 and f.skipped == len(records) - 1 and f.messages == 0
        after = snapshot(app, proj, sessions=["s-4"])
        assert after["conversations"] == before["conversations"]
        assert len(after["native"]) == len(before["native"]) + 1  # the old version stays: records are immutable
        assert ingest_file(app, path).status == "unchanged"
    finally:
        app.close()


def test_rewritten_message_fails_closed_and_keeps_the_checkpoint(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    records = claude_records("s-5", str(proj), 3)
    path = write_jsonl(tmp_path / "s.jsonl", records)
    app = make_app(proj)
    try:
        assert import_sources(app, [path]).errors == []
        before = snapshot(app, proj)
        records[0]["message"] = {"role": "user", "content": "a different question"}  # type: ignore[index]
        write_jsonl(path, records)
        report = import_sources(app, [path])
        (f,) = report.file_reports
        assert f.error is not None and f.error.code == "message_mismatch" and f.stored == 0
        assert snapshot(app, proj) == before
    finally:
        app.close()


def test_truncated_to_empty_replaces_the_checkpoint_once(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    path = write_jsonl(tmp_path / "s.jsonl", claude_records("s-6", str(proj), 2))
    app = make_app(proj)
    try:
        import_sources(app, [path])
        path.write_bytes(b"")
        os.utime(path)
        report = ingest_file(app, path, format_id="claude-code/claude-jsonl/v1")
        assert report.ok and report.rescanned
        with app.project(proj) as st:
            cp = st.native_transcripts.get_checkpoint("claude-code:s.jsonl")
            assert cp is not None and cp.byte_offset == 0 and len(st.native_transcripts.list_by_source("s.jsonl")) == 8
        again = ingest_file(app, path, format_id="claude-code/claude-jsonl/v1")
        assert again.status == "unchanged"
        with app.project(proj) as st:
            assert st.native_transcripts.get_checkpoint("claude-code:s.jsonl") == cp
    finally:
        app.close()
