"""Compressed payloads read back byte for byte, whichever codec wrote them; a rolled-back dictionary is
never used."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lcm_sqlite import codec

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.models import (
    Checkpoint,
    FormatIdentity,
    NativeRecordInput,
    NewMessage,
    NewPart,
    PartKind,
    Role,
)

from .conftest import MakeFactory, db_path, ref

FMT = FormatIdentity("claude-code", "jsonl", "1")
NOW = datetime(2024, 4, 1, tzinfo=UTC)
WORDS = ["build", "deploy", "retry", "socket", "timeout", "état", "日本語", "🚀", "cache", "schema", "index", "query"]


def _payload(rng: random.Random, n: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 400)))
    return json.dumps({"n": n, "type": "assistant", "message": {"content": [{"type": "text", "text": text}]},
                       "sessionId": "s", "nul_escape": "\\u0000 is text here"}, ensure_ascii=False)


def _records(count: int, start: int = 0, seed: int = 1) -> list[NativeRecordInput]:
    rng = random.Random(seed)
    return [NativeRecordInput(f"{n:064x}", FMT, "session-1", "proj/a.jsonl", n, _payload(rng, n), f"{n + 7:064x}",
                              "lcm-scrub/1:" + "ab" * 32, NOW) for n in range(start, start + count)]


def _cp(last: int, revision: int = 0) -> Checkpoint:
    return Checkpoint("src", revision, last, "cd" * 32, "scrub-1", last, last + 1, 0, 0, "{}")


def _codecs(tmp_path: Path) -> dict[str | None, int]:
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        return dict(raw.execute("SELECT coalesce(b.codec, n.payload_codec), count(*) FROM native_records n "
                                "LEFT JOIN blocks b ON b.block_id = n.payload_block GROUP BY 1").fetchall())
    finally:
        raw.close()


def _stored_bytes(tmp_path: Path) -> int:
    """The bytes native payloads take: their rows' and their blocks'."""
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        return int(raw.execute("SELECT (SELECT sum(length(payload)) FROM native_records) + "
                               "(SELECT coalesce(sum(length(data)), 0) FROM blocks)").fetchone()[0])
    finally:
        raw.close()


def _dictionaries(tmp_path: Path) -> int:
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        return int(raw.execute("SELECT count(*) FROM codec_dictionaries").fetchone()[0])
    finally:
        raw.close()


def test_payloads_round_trip_through_every_codec(make_factory: MakeFactory, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "TRAIN_BYTES", 50_000)
    storage = make_factory().open_project(ref())
    first = _records(300)
    storage.native_transcripts.ingest_batch(first, source_key="src", expected=None, new_checkpoint=_cp(299))
    later = _records(50, start=300, seed=2)
    storage.native_transcripts.ingest_batch(later, source_key="src", expected=storage.native_transcripts
                                            .get_checkpoint("src"), new_checkpoint=_cp(349))
    monkeypatch.setattr(codec, "zstandard", None)  # a machine without zstandard writes zlib
    storage.close()
    storage = make_factory().open_project(ref())
    fallback = _records(20, start=350, seed=3)
    storage.native_transcripts.ingest_batch(fallback, source_key="src", expected=storage.native_transcripts
                                            .get_checkpoint("src"), new_checkpoint=_cp(369))
    monkeypatch.undo()
    storage.close()
    storage = make_factory().open_project(ref())
    stored = storage.native_transcripts.list_by_native_session("session-1")
    assert [r.payload_json for r in stored] == [r.payload_json for r in first + later + fallback]
    assert [r.ingest_key for r in stored] == [r.ingest_key for r in first + later + fallback]
    assert [r.content_sha256 for r in stored] == [r.content_sha256 for r in first + later + fallback]
    used = _codecs(tmp_path)
    assert used == {codec.SHIPPED: 300, "zstd:1": 50, "zlib": 20}  # trained after the first batch
    stored_bytes = sum(len(r.payload_json.encode()) for r in stored)
    assert _stored_bytes(tmp_path) < 0.5 * stored_bytes


def test_parts_round_trip_compressed(make_factory: MakeFactory) -> None:
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    long_text = "ünïcode and emoji 🚀 " * 200
    parts = (NewPart(PartKind.TEXT, text=long_text, raw_json=json.dumps({"type": "text", "text": long_text})),
             NewPart(PartKind.TOOL_CALL, text="{}", tool_call_id="t1", tool_name="Bash", raw_json='{"id":"t1"}'))
    [message] = storage.conversations.append_messages(conv.conversation_id,
                                                      [NewMessage(Role.ASSISTANT, long_text, 10, parts=parts)])
    got = storage.conversations.list_parts([message.message_id])[message.message_id]
    assert [(p.text, p.raw_json, p.tool_call_id) for p in got] == [(p.text, p.raw_json, p.tool_call_id)
                                                                   for p in parts]


def test_a_rolled_back_dictionary_is_never_used(make_factory: MakeFactory, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "TRAIN_BYTES", 50_000)
    storage = make_factory().open_project(ref())

    def train_then_fail(repos):  # type: ignore[no-untyped-def]
        repos.native_transcripts.ingest_batch(_records(250), source_key="src", expected=None,
                                              new_checkpoint=_cp(249))
        raise RuntimeError("boom")

    with pytest.raises(Exception, match="rolled back"):
        storage.transaction(train_then_fail)
    storage.native_transcripts.ingest_batch(_records(10), source_key="src", expected=None, new_checkpoint=_cp(9))
    assert _codecs(tmp_path) == {codec.SHIPPED: 10}
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in _records(10)]


def test_an_import_trains_its_dictionary_from_enough_bytes_not_from_its_first_small_records(
        make_factory: MakeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many tiny records first (what a worker that starts on the small files stores) train nothing: a
    dictionary from them would be poor; once enough payload bytes were seen, one is trained from them."""
    monkeypatch.setattr(codec, "TRAIN_BYTES", 2 * 2**20)  # the records below hold a few MB
    storage = make_factory().open_project(ref())
    tiny = [NativeRecordInput(f"{n:064x}", FMT, "session-1", "proj/a.jsonl", n,
                              json.dumps({"n": n, "type": "progress", "ok": True, "padding": "x" * 90}),
                              f"{n + 7:064x}", "lcm-scrub/1:" + "ab" * 32, NOW) for n in range(800)]
    storage.native_transcripts.ingest_batch(tiny, source_key="src", expected=None, new_checkpoint=_cp(799))
    assert _codecs(tmp_path) == {codec.SHIPPED: 800}
    assert _dictionaries(tmp_path) == 0
    big = _records(3000, start=800)
    assert sum(len(r.payload_json) for r in big[:1800]) > codec.TRAIN_BYTES
    cp = storage.native_transcripts.get_checkpoint("src")
    for start in range(0, len(big), 600):
        cp = storage.native_transcripts.ingest_batch(big[start:start + 600], source_key="src", expected=cp,
                                                     new_checkpoint=_cp(800 + start + 599)).checkpoint
    used = _codecs(tmp_path)
    assert _dictionaries(tmp_path) == 1
    assert used.get("zstd:1", 0) >= 1200 and used[codec.SHIPPED] <= 800 + 1800
    stored = storage.native_transcripts.list_by_native_session("session-1")
    assert [r.payload_json for r in stored] == [r.payload_json for r in tiny + big]
    storage.close()


def test_a_new_project_compresses_with_the_shipped_dictionary_from_its_first_record(
        make_factory: MakeFactory, tmp_path: Path) -> None:
    """A small project has no dictionary of its own, yet its records compress better than with zstd alone:
    the shipped dictionary holds the structure every transcript record repeats."""
    sample = (Path(__file__).parents[2] / "formats/samples/claude/projects/-home-dev-orders-api/"
              "7c1f3a52-4b8e-4d2a-9e61-0a5b3c9d2f18.jsonl").read_text().splitlines()
    records = [NativeRecordInput(f"{n:064x}", FMT, "session-1", "proj/a.jsonl", n,
                                 line.replace("7c1f3a52", "0badcafe"),  # not the dictionary's own bytes
                                 f"{n + 7:064x}", "lcm-scrub/1:" + "ab" * 32, NOW) for n, line in enumerate(sample)]
    storage = make_factory().open_project(ref())
    storage.native_transcripts.ingest_batch(records, source_key="src", expected=None,
                                            new_checkpoint=_cp(len(records) - 1))
    assert _codecs(tmp_path) == {codec.SHIPPED: len(records)}
    assert _dictionaries(tmp_path) == 0
    on_disk = _stored_bytes(tmp_path)
    import zstandard

    alone = zstandard.ZstdCompressor(level=codec.LEVEL)
    assert on_disk < 0.8 * sum(len(alone.compress(r.payload_json.encode())) for r in records)
    storage.close()
    storage = make_factory().open_project(ref())
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in records]


def test_rows_written_without_a_dictionary_by_an_older_version_still_read_back(
        make_factory: MakeFactory, tmp_path: Path) -> None:
    import zstandard

    storage = make_factory().open_project(ref())
    records = _records(5)
    storage.native_transcripts.ingest_batch(records, source_key="src", expected=None, new_checkpoint=_cp(4))
    storage.close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    plain = zstandard.ZstdCompressor(level=codec.LEVEL)
    raw.executemany("UPDATE native_records SET payload_codec = 'zstd', payload = ?, payload_block = NULL "
                    "WHERE source_ordinal = ?",
                    [(plain.compress(r.payload_json.encode()), r.source_ordinal) for r in records])
    raw.commit()
    raw.close()
    assert _codecs(tmp_path) == {"zstd": 5}
    storage = make_factory().open_project(ref())
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in records]


@pytest.mark.parametrize("damage", ["altered", "missing"])
def test_a_changed_or_missing_shipped_dictionary_is_a_typed_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  damage: str) -> None:
    """Rows compressed with the shipped dictionary read back only with its exact bytes."""
    changed = tmp_path / "transcript_dictionary.jsonl"
    if damage == "altered":
        changed.write_bytes(codec.SHIPPED_FILE.read_bytes() + b"\n")
    monkeypatch.setattr(codec, "SHIPPED_FILE", changed)
    codec.shipped_dictionary.cache_clear()
    try:
        with pytest.raises(StorageUnavailableError, match="reinstall") as raised:
            codec.shipped_dictionary()
        assert raised.value.code == "codec_dictionary"
    finally:
        codec.shipped_dictionary.cache_clear()


def test_a_dictionary_that_does_not_beat_the_codec_in_use_on_held_out_samples_is_not_kept(
        make_factory: MakeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records whose text shares nothing from one to the next (random bytes as hex): a trained dictionary
    compresses the held-out ones no better than the shipped one, so none is stored, and the import goes
    on with the shipped dictionary without training again."""
    monkeypatch.setattr(codec, "TRAIN_BYTES", 50_000)
    rng = random.Random(9)
    records = [NativeRecordInput(f"{n:064x}", FMT, "session-1", "proj/a.jsonl", n,
                                 json.dumps({"n": n, "blob": rng.randbytes(300).hex()}), f"{n + 7:064x}",
                                 "lcm-scrub/1:" + "ab" * 32, NOW) for n in range(600)]
    trained: list[bool] = []
    real = codec.Codec.train

    def counted(self: codec.Codec, *args: Any, **kwargs: Any) -> bool:
        trained.append(real(self, *args, **kwargs))
        return trained[-1]

    monkeypatch.setattr(codec.Codec, "train", counted)
    storage = make_factory().open_project(ref())
    cp = None
    for start in range(0, 600, 100):
        cp = storage.native_transcripts.ingest_batch(records[start:start + 100], source_key="src", expected=cp,
                                                     new_checkpoint=_cp(start + 99)).checkpoint
    assert trained == [False] and _dictionaries(tmp_path) == 0
    assert _codecs(tmp_path) == {codec.SHIPPED: 600}
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in records]
    storage.close()
