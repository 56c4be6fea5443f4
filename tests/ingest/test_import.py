"""End-to-end import on real SQLite: real sessions, generated Claude/Codex sessions, re-runs and appends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lcm_framework.errors import ConfigError
from lcm_framework.ingest import import_sources, ingest_file
from lcm_framework.storage.models import PartKind
from tests.conftest import CLAUDE_SESSIONS, shared_testdata

from .support import claude_records, codex_records, make_app, snapshot, write_jsonl


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_bytes().split(b"\n") if line.strip())


def test_real_claude_sessions_import_completely(tmp_path: Path) -> None:
    app = make_app(tmp_path / "here")
    try:
        report = import_sources(app, [shared_testdata(CLAUDE_SESSIONS)])
        assert report.errors == [] and report.quarantined == {}
        files = sorted(CLAUDE_SESSIONS.glob("*.jsonl"))
        assert report.files == len(files) and report.records == sum(_lines(f) for f in files)
        assert report.stored == report.records and report.messages > 0
        roots = {c.project_root for c in report.conversations}
        assert roots == {"/path/to/Demo"}  # the sessions' own working directory
        with app.project("/path/to/Demo") as st:
            convs = st.conversations.list_conversations()
            # each conversation once, its messages summed; the sub-agent files (native records only) are no
            # conversation of their own, though they carry their parent's session id
            assert sorted((c.session_id, c.conversation_id, c.new_messages) for c in report.conversations) == \
                sorted((c.session_id, c.conversation_id, st.conversations.message_count(c.conversation_id))
                       for c in convs)
            for f in files:
                natives = st.native_transcripts.list_by_source(f.name)
                assert len(natives) == _lines(f)  # every line is a stored native record
                assert [n.source_ordinal for n in natives] == list(range(len(natives)))
            assert sum(st.conversations.message_count(c.conversation_id) for c in convs) == report.messages
            for conv in convs:
                msgs = st.conversations.list_messages(conv.conversation_id)
                assert [m.seq for m in msgs] == list(range(len(msgs)))
                for m in msgs:  # every message is linked from exactly one native record
                    assert len(st.native_transcripts.list_by_message(m.message_id)) == 1
                parts = st.conversations.list_parts([m.message_id for m in msgs])
                calls = {p.tool_call_id for ps in parts.values() for p in ps if p.kind is PartKind.TOOL_CALL}
                results = {p.tool_call_id for ps in parts.values() for p in ps if p.kind is PartKind.TOOL_RESULT}
                assert calls <= results, "every tool_use has its tool_result"
                items = st.context.list_items(conv.conversation_id)
                assert [i.message_id for i in items] == [m.message_id for m in msgs]
    finally:
        app.close()


def test_generated_sessions_land_in_their_working_directory_projects(tmp_path: Path) -> None:
    proj_a, proj_b = tmp_path / "alpha", tmp_path / "beta"
    proj_a.mkdir()
    proj_b.mkdir()
    src = tmp_path / "src"
    write_jsonl(src / "claude.jsonl", claude_records("c-1", str(proj_a), 5))
    write_jsonl(src / "rollout-2025-codex.jsonl", codex_records("x-1", str(proj_b), 4))
    app = make_app(tmp_path / "cwd")
    try:
        report = import_sources(app, [src])
        assert report.errors == []
        by_session = {c.session_id: c for c in report.conversations}
        assert by_session["c-1"].project_root == str(proj_a) and by_session["c-1"].new_messages == 20
        assert by_session["x-1"].project_root == str(proj_b)
        formats = {f.locator: f.format_id for f in report.file_reports}
        assert formats == {"claude.jsonl": "claude-code/claude-jsonl/v1",
                           "rollout-2025-codex.jsonl": "codex/codex-jsonl/v1"}
        with app.project(proj_b) as st:
            (conv,) = st.conversations.find_conversations("x-1")
            msgs = st.conversations.list_messages(conv.conversation_id)
            assert len(msgs) == by_session["x-1"].new_messages > 0
            natives = st.native_transcripts.list_by_native_session("x-1")
            assert len(natives) == _lines(src / "rollout-2025-codex.jsonl")  # carried-forward session id
            parts = st.conversations.list_parts([m.message_id for m in msgs])
            calls = {p.tool_call_id for ps in parts.values() for p in ps if p.kind is PartKind.TOOL_CALL}
            results = {p.tool_call_id for ps in parts.values() for p in ps if p.kind is PartKind.TOOL_RESULT}
            assert calls == results == {f"call_{i}" for i in range(4)}
        with app.project(proj_a) as st:
            assert st.conversations.find_conversations("x-1") == []
    finally:
        app.close()


def test_project_flag_overrides_the_working_directory(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "s.jsonl", claude_records("c-2", str(tmp_path / "elsewhere"), 2))
    app = make_app(tmp_path / "cwd")
    try:
        report = import_sources(app, [tmp_path / "s.jsonl"], project=tmp_path / "target")
        assert {c.project_root for c in report.conversations} == {str((tmp_path / "target").resolve())}
    finally:
        app.close()


def test_rerun_is_idempotent_and_an_append_imports_only_new_records(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    records = claude_records("c-3", str(proj), 30)
    same = {"type": "summary", "summary": "identical", "leafUuid": "leaf"}
    for at in (3, 10, 40, 60, 75, 90):  # identical records before and after every resume point
        records.insert(at, same)
    path = write_jsonl(tmp_path / "src" / "s.jsonl", records[:50])
    app = make_app(proj)
    try:
        first = import_sources(app, [path], batch_size=7)
        assert first.records == 50 and first.errors == [] and first.stored == 50
        before = snapshot(app, proj)
        again = import_sources(app, [path], batch_size=7)
        assert again.records == 0 and again.file_reports[0].status == "unchanged"
        assert snapshot(app, proj) == before
    finally:
        app.close()
    write_jsonl(path, records[50:70], mode="a")
    other = make_app(proj)  # a new process: no cached counters, the verified prefix is replayed
    try:
        third = ingest_file(other, path)
        assert third.ok and third.records == 20 and third.resumed_from > 0
        assert third.messages == 19 and third.skipped == 0 and third.stored == 20
        write_jsonl(path, records[70:], mode="a")
        fourth = ingest_file(other, path)  # the daemon's case: counters cached by checkpoint revision
        assert fourth.ok and fourth.records == fourth.stored == len(records) - 70
        assert fourth.messages == len(records) - 70 - 2
        appended = snapshot(other, proj)
    finally:
        other.close()
    fresh = make_app(proj, home=tmp_path / "fresh-home")
    try:
        assert import_sources(fresh, [path], batch_size=7).errors == []
        reference = snapshot(fresh, proj)
    finally:
        fresh.close()
    assert appended["conversations"] == reference["conversations"]
    assert appended["native"] == reference["native"]
    (cp,) = appended["checkpoints"].values()
    (ref_cp,) = reference["checkpoints"].values()
    assert (cp.byte_offset, cp.prefix_sha256, cp.last_source_ordinal, cp.imported) == (
        ref_cp.byte_offset, ref_cp.prefix_sha256, ref_cp.last_source_ordinal, ref_cp.imported)


def test_unterminated_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    records = claude_records("c-4", str(proj), 2)
    path = tmp_path / "s.jsonl"
    body = "".join(json.dumps(r) + "\n" for r in records[:-1])
    last = json.dumps(records[-1])
    path.write_text(body + last[:40])  # a writer is in the middle of the last line
    app = make_app(proj)
    try:
        report = import_sources(app, [path])
        assert report.errors == [] and report.records == len(records) - 1 and report.quarantined == {}
        path.write_text(body + last)  # complete but still without its newline: imported
        assert ingest_file(app, path).records == 1
        with path.open("a") as fh:
            fh.write("\n" + json.dumps(records[0] | {"uuid": "extra"}) + "\n")
        extra = ingest_file(app, path)
        assert extra.ok and extra.records == 1
        with app.project(proj) as st:
            ordinals = [r.source_ordinal for r in st.native_transcripts.list_by_source("s.jsonl")]
        assert ordinals == list(range(len(records) + 1))  # the same ordinals a single read gives
    finally:
        app.close()


def test_dry_run_writes_nothing(tmp_path: Path, lcm_env: Path) -> None:
    proj = tmp_path / "p"
    path = write_jsonl(tmp_path / "s.jsonl", claude_records("c-5", str(proj), 3))
    with path.open("ab") as fh:
        fh.write(b"{not json\n")
    app = make_app(proj)
    try:
        report = import_sources(app, [path], dry_run=True)
        assert report.dry_run and report.records == 13 and report.messages == 12
        assert report.quarantined == {"malformed-json": 1}
        assert not (lcm_env / "transcript-quarantine").exists()
        assert app.storage.list_projects() == []
    finally:
        app.close()


def test_batch_size_and_provider_are_validated(tmp_path: Path) -> None:
    app = make_app(tmp_path / "p")
    try:
        with pytest.raises(ConfigError):
            import_sources(app, [tmp_path], batch_size=0)
        with pytest.raises(ConfigError):
            import_sources(app, [tmp_path], batch_size=1001)
        with pytest.raises(ConfigError):
            import_sources(app, [tmp_path], provider="nobody")
    finally:
        app.close()


def test_default_roots_and_provider_filter(tmp_path: Path, lcm_env: Path) -> None:
    home = Path(os.environ["HOME"])
    proj = tmp_path / "p"
    write_jsonl(home / ".claude" / "projects" / "-p" / "c.jsonl", claude_records("c-6", str(proj), 2))
    write_jsonl(home / ".codex" / "sessions" / "2025" / "01" / "01" / "rollout-a.jsonl",
                codex_records("x-6", str(proj), 2))
    app = make_app(proj)
    try:
        only_codex = import_sources(app, provider="codex")
        assert [f.locator for f in only_codex.file_reports] == ["sessions/2025/01/01/rollout-a.jsonl"]
        everything = import_sources(app)
        statuses = {f.locator: f.status for f in everything.file_reports}
        assert statuses == {"-p/c.jsonl": "imported", "sessions/2025/01/01/rollout-a.jsonl": "unchanged"}
        # the same file named explicitly gets the same locator under its client root: nothing new
        named = import_sources(app, [home / ".claude" / "projects" / "-p" / "c.jsonl"])
        assert named.file_reports[0].locator == "-p/c.jsonl" and named.file_reports[0].status == "unchanged"
    finally:
        app.close()
