"""SQLite ``prepare_writes``: the transaction that follows encodes nothing itself, and stores the same bytes."""

from __future__ import annotations

import dataclasses
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



@pytest.mark.parametrize("size", [12, 2])
def test_a_prepared_batch_is_compressed_before_the_transaction(make_factory: MakeFactory,
                                                               monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """A batch large enough for a block of native payloads, and one too small for a block: after
    ``prepare_writes`` the transaction compresses nothing."""
    from lcm_sqlite.codec import Codec

    calls = {"encode_block": 0, "encode_many": 0}
    for name in calls:
        real = getattr(Codec, name)

        def counted(self: Codec, *args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(Codec, name, counted)
    extra = ', "requestId": "req_' + "0123456789abcdef" * 6 + '", "n": '
    batch = [(dataclasses.replace(m, seq=n), p.replace('"n": ', f'"seq": {n}{extra}'))
             for n, (m, p) in enumerate((_batch() * 4)[:size])]
    project = make_factory().open_project(ref(f"blocks-{size}"))
    project.prepare_writes([m for m, _p in batch], [(p, m) for m, p in batch])
    assert calls["encode_block"] == (1 if size >= 4 else 0)
    before = dict(calls)
    _write(project, batch, prepare=False)
    assert calls == before
    project.close()
