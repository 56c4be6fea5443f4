"""The same import on the PostgreSQL backend stores exactly what it stores on SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lcm_framework.app import App
from lcm_framework.ingest import import_sources, ingest_file
from lcm_framework.kernel.plugins import build_plugins
from tests.postgres.support import require_database

from .support import claude_records, codex_records, make_app, snapshot, write_jsonl

pytestmark = pytest.mark.postgres


def test_postgres_import_matches_sqlite(tmp_path: Path) -> None:
    db = require_database()
    proj = tmp_path / "proj"
    src = tmp_path / "src"
    claude = claude_records("pg-1", str(proj), 6)
    write_jsonl(src / "a.jsonl", claude[:15])
    write_jsonl(src / "rollout-pg.jsonl", codex_records("pg-2", str(proj), 3))
    with (src / "a.jsonl").open("a") as fh:
        fh.write("{oops\n")
    sessions = ["pg-1", "pg-2"]
    with db.fresh_schema() as schema:
        config = db.config(schema, tmp_path / "pg")
        app = App(config, build_plugins(config.env))
        try:
            first = import_sources(app, [src], batch_size=4)
            assert first.errors == [] and first.quarantined == {"malformed-json": 1}
            write_jsonl(src / "a.jsonl", claude[15:], mode="a")
            appended = ingest_file(app, src / "a.jsonl")
            assert appended.ok and appended.records == len(claude) - 15 and appended.resumed_from > 0
            assert import_sources(app, [src], batch_size=4).records == 0
            on_postgres = snapshot(app, proj, sessions)
        finally:
            app.close()
    lite = make_app(proj, home=tmp_path / "sqlite-home")
    try:
        assert import_sources(lite, [src], batch_size=4).errors == []
        on_sqlite = snapshot(lite, proj, sessions)
    finally:
        lite.close()
    for key in ("conversations", "native", "redactions", "quarantine"):
        assert on_postgres[key] == on_sqlite[key], key
    assert on_postgres["checkpoints"].keys() == on_sqlite["checkpoints"].keys()
    for key, cp in on_postgres["checkpoints"].items():
        ref = on_sqlite["checkpoints"][key]
        assert (cp.byte_offset, cp.prefix_sha256, cp.last_source_ordinal, cp.imported, cp.quarantined) == (
            ref.byte_offset, ref.prefix_sha256, ref.last_source_ordinal, ref.imported, ref.quarantined)
        assert json.loads(cp.state_json)["next_seq"] == json.loads(ref.state_json)["next_seq"]


def test_postgres_import_in_several_processes_matches_one(tmp_path: Path) -> None:
    """Workers rebuild the PostgreSQL configuration (URL, schema, pool) from the parent's."""
    db = require_database()
    proj = tmp_path / "proj"
    src = tmp_path / "src"
    sessions = [f"pgw-{i}" for i in range(4)]
    for i, session in enumerate(sessions):
        write_jsonl(src / f"c{i}.jsonl", claude_records(session, str(proj), 5 + i))
    results = []
    for workers in (1, 3):
        with db.fresh_schema() as schema:
            config = db.config(schema, tmp_path / f"pg-{workers}")
            app = App(config, build_plugins(config.env))
            try:
                report = import_sources(app, [src], batch_size=4, workers=workers)
                assert report.errors == [] and report.stored == sum(4 * (5 + i) for i in range(4))
                snap = snapshot(app, proj, sessions)
            finally:
                app.close()
        results.append({key: snap[key] for key in ("conversations", "native", "redactions", "quarantine")})
    assert results[0] == results[1]
