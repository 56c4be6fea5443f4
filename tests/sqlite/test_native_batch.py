"""The batched SQLite write path of ``native_transcripts.ingest_batch``: one ``IN`` lookup per chunk
of ingest keys and one ``executemany`` insert, with the per-record rules unchanged."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from lcm_framework.errors import ConflictError
from lcm_framework.storage.models import Checkpoint, FormatIdentity, NativeRecordInput

from .conftest import MakeFactory, ref

FMT = FormatIdentity("claude-code", "claude-jsonl", "v1")
NOW = datetime(2024, 4, 1, tzinfo=UTC)


def rec(n: int, payload: str | None = None) -> NativeRecordInput:
    return NativeRecordInput(f"key-{n}", FMT, "s", "a.jsonl", n, payload or f'{{"n":{n}}}', f"{n:064x}",
                             "scrub-1", NOW, None)


def cp(offset: int, imported: int, skipped: int = 0) -> Checkpoint:
    return Checkpoint("src", 0, offset, "ab" * 32, "scrub-1", imported, imported, skipped, 0, "{}")


def test_more_keys_than_one_lookup_chunk_insert_once_in_order(make_factory: MakeFactory) -> None:
    storage = make_factory().open_project(ref())
    repo = storage.native_transcripts
    first = repo.ingest_batch([rec(n) for n in range(700)], source_key="src", expected=None,
                              new_checkpoint=cp(10, 700))
    assert (first.inserted, first.skipped) == (700, 0)
    again = repo.ingest_batch([rec(n) for n in range(1300)], source_key="src", expected=first.checkpoint,
                              new_checkpoint=cp(20, 1300))
    assert (again.inserted, again.skipped) == (600, 700)
    stored = repo.list_by_source("a.jsonl")
    assert [r.source_ordinal for r in stored] == list(range(1300))
    assert [r.transcript_id for r in stored] == sorted(r.transcript_id for r in stored)
    storage.close()


def test_a_key_repeated_inside_one_batch_is_stored_once(make_factory: MakeFactory) -> None:
    storage = make_factory().open_project(ref())
    result = storage.native_transcripts.ingest_batch([rec(0), rec(1), rec(0)], source_key="src", expected=None,
                                                     new_checkpoint=cp(10, 2, 1))
    assert (result.inserted, result.skipped) == (2, 1)
    assert len(storage.native_transcripts.list_by_source("a.jsonl")) == 2
    storage.close()


@pytest.mark.parametrize("stored_first", [False, True])
def test_a_key_reused_for_other_data_conflicts_and_writes_nothing(make_factory: MakeFactory,
                                                                  stored_first: bool) -> None:
    storage = make_factory().open_project(ref())
    repo = storage.native_transcripts
    expected = None
    if stored_first:
        expected = repo.ingest_batch([rec(0)], source_key="src", expected=None, new_checkpoint=cp(5, 1)).checkpoint
    batch = [rec(1), rec(0), replace(rec(0), payload_json='{"n":"other"}')]
    with pytest.raises(ConflictError) as caught:
        repo.ingest_batch(batch, source_key="src", expected=expected, new_checkpoint=cp(10, 2))
    assert caught.value.code == "ingest_key_conflict"
    assert repo.get_checkpoint("src") == expected
    assert [r.source_ordinal for r in repo.list_by_source("a.jsonl")] == ([0] if stored_first else [])
    storage.close()
