"""Each byte of a transcript is read once and each record parsed and scrubbed once: the first records that
name the format and the session go on into the import, and the checkpoint's prefix digest hashes the very
bytes that were parsed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lcm_framework.ingest import import_sources, source
from lcm_framework.scrub.gate import project_scrubber
from lcm_framework.scrub.scrubber import Scrubber

from .support import claude_records, make_app, snapshot, write_jsonl


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bytes returned by every positional read of a bound source."""
    read: list[int] = []
    real_pread, real_preadv = source.os.pread, source.os.preadv

    def pread(fd: int, n: int, offset: int) -> bytes:
        data = real_pread(fd, n, offset)
        read.append(len(data))
        return data

    def preadv(fd: int, buffers: list[memoryview], offset: int) -> int:
        n = real_preadv(fd, buffers, offset)
        read.append(n)
        return n

    monkeypatch.setattr(source.os, "pread", pread)
    monkeypatch.setattr(source.os, "preadv", preadv)
    return read


def _checkpoint_digest(app, project: Path, key: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    with app.project(project) as st:
        cp = st.native_transcripts.get_checkpoint(key)
    assert cp is not None
    return cp.byte_offset, cp.prefix_sha256


def test_a_fresh_import_reads_each_byte_once_and_scrubs_each_record_once(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    proj = tmp_path / "p"
    path = write_jsonl(tmp_path / "s.jsonl", claude_records("one-pass", str(proj), 60, text="words " * 40))
    app = make_app(proj)
    project_scrubber(app)  # built (and checked against the formats' samples) before counting
    scrubbed: list[int] = []
    real_scrub = Scrubber.scrub_record
    monkeypatch.setattr(Scrubber, "scrub_record",
                        lambda self, value, **kw: scrubbed.append(1) or real_scrub(self, value, **kw))
    read = _count_reads(monkeypatch)
    try:
        report = import_sources(app, [path], batch_size=7)
        (f,) = report.file_reports
        assert f.ok and f.records == 240 and f.stored == 240
        size = path.stat().st_size
        assert size <= sum(read) <= size + 1  # (+1: the last byte, read to see whether the file ends a line)
        assert len(scrubbed) == 240
        data = path.read_bytes()
        assert _checkpoint_digest(app, proj, "claude-code:s.jsonl") == (size, hashlib.sha256(data).hexdigest())
    finally:
        app.close()


def test_the_digest_is_right_when_the_kept_bytes_overflow_and_are_read_again(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``KEEP_BYTES`` of bytes not hashed yet the stream forgets them and the hash reads them again; a
    resumed import then verifies that digest and reads on after it."""
    monkeypatch.setattr(source, "KEEP_BYTES", 3000)
    proj = tmp_path / "p"
    records = claude_records("kept", str(proj), 30, text="padding " * 60)
    path = write_jsonl(tmp_path / "s.jsonl", records[:80])
    app = make_app(proj)
    try:
        assert import_sources(app, [path], batch_size=25).errors == []
        assert _checkpoint_digest(app, proj, "claude-code:s.jsonl")[1] == hashlib.sha256(path.read_bytes()).hexdigest()
        write_jsonl(path, records[80:], mode="a")
        (f,) = import_sources(app, [path], batch_size=25).file_reports
        assert f.ok and f.resumed_from > 0 and f.stored == len(records) - 80 and not f.rescanned
        assert _checkpoint_digest(app, proj, "claude-code:s.jsonl")[1] == hashlib.sha256(path.read_bytes()).hexdigest()
        fresh = make_app(proj, home=tmp_path / "other-home")
        try:
            assert import_sources(fresh, [path]).errors == []
            assert snapshot(fresh, proj, sessions=["kept"])["conversations"] == \
                snapshot(app, proj, sessions=["kept"])["conversations"]
        finally:
            fresh.close()
    finally:
        app.close()
