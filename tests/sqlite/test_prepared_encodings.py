"""SQLite ``prepare_writes``: the transaction that follows encodes nothing itself, and stores the same bytes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from lcm_sqlite import encodings

from tests.conformance.test_prepared_writes import _batch, _write
from tests.sqlite.conftest import MakeFactory, db_path, ref

TIMES = {"created_at", "ingested_at", "observed_at"}


def _rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        out = {}
        for table in ("texts", "messages", "message_parts", "native_records"):
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[1] not in TIMES]
            out[table] = [dict(r) for r in conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")]
        return out
    finally:
        conn.close()


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the part and payload encodings computed (cache misses), wherever they happen."""
    calls = {"part": 0, "payload": 0}
    for name in calls:
        real = getattr(encodings, f"_{name}")

        def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            calls[_name] += 1
            return _real(*args)

        monkeypatch.setattr(encodings, f"_{name}", counted)
    return calls


def test_after_prepare_the_transaction_only_writes(make_factory: MakeFactory, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_factory().open_project(ref("prepared"))
    batch = _batch()
    calls = _counting(monkeypatch)
    project.prepare_writes([m for m, _p in batch], [(p, m) for m, p in batch])
    prepared = dict(calls)
    assert prepared == {"part": 3, "payload": 3}
    _write(project, batch, prepare=False)
    assert calls == prepared  # every encoding the transaction needed was made before it took the lock
    project.close()


def test_prepared_and_unprepared_imports_store_the_same_bytes(make_factory: MakeFactory, tmp_path: Path) -> None:
    factory = make_factory()
    for name, prepare in (("with", True), ("without", False)):
        project = factory.open_project(ref(name))
        _write(project, _batch(), prepare=prepare)
        project.close()
    with_rows, without_rows = (_rows(db_path(tmp_path, ref(name))) for name in ("with", "without"))
    assert with_rows == without_rows
    cut_out = [r["payload_text_at"] is not None for r in with_rows["native_records"]]
    assert with_rows["texts"] and cut_out == [True, True, False]  # the shared texts left the payloads
