"""Native payloads and message texts stored in blocks of their batch: exact reads through every lookup,
smaller than rows compressed alone, small batches packed by ``lcm vacuum``, and no block a rolled-back
write left cached."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import zstandard
from lcm_sqlite import blocks, codec

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.contracts import ProjectStorage, Repositories
from lcm_framework.storage.models import Checkpoint, FormatIdentity, NativeRecordInput, NewMessage, Role, SearchQuery

from .conftest import MakeFactory, db_path, ref

FMT = FormatIdentity("claude-code", "jsonl", "1")
NOW = datetime(2024, 4, 1, tzinfo=UTC)
WORDS = ["build", "deploy", "retry", "socket", "timeout", "état", "日本語", "🚀", "cache", "schema", "index", "query",
         "\\u0000", "\"quoted\"", "tab\there"]


def _payload(rng: random.Random, n: int, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return json.dumps({"n": n, "type": "assistant", "uuid": f"{rng.getrandbits(128):032x}",
                       "message": {"content": [{"type": "text", "text": text}]}}, ensure_ascii=False)


def _records(count: int, *, start: int = 0, seed: int = 1, session: str = "session-1") -> list[NativeRecordInput]:
    rng = random.Random(seed)
    out = []
    for n in range(start, start + count):
        payload = f'{{"n":{n}}}' if n % 17 == 0 else _payload(rng, n, rng.randint(5, 300))  # some stay plain
        out.append(NativeRecordInput(f"{n:064x}", FMT, session, "proj/a.jsonl", n, payload, f"{n + 7:064x}",
                                     "lcm-scrub/1:" + "ab" * 32, NOW))
    return out


def _ingest(storage: ProjectStorage | Repositories, records: list[NativeRecordInput]) -> None:
    native = storage.native_transcripts
    native.ingest_batch(records, source_key="src", expected=native.get_checkpoint("src"),
                        new_checkpoint=Checkpoint("src", 0, records[-1].source_ordinal, "cd" * 32, "scrub-1",
                                                  records[-1].source_ordinal, 1, 0, 0, "{}"))


def _raw(tmp_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(db_path(tmp_path, ref()))


def test_a_batch_is_stored_in_blocks_and_reads_back_exactly(make_factory: MakeFactory, tmp_path: Path) -> None:
    records = _records(300)
    huge = "x" * (blocks.MAX_BYTES + 10)
    records.append(NativeRecordInput("f" * 64, FMT, "session-1", "proj/a.jsonl", 300, json.dumps({"huge": huge}),
                                     "e" * 64, "lcm-scrub/1:" + "ab" * 32, NOW))
    storage = make_factory().open_project(ref())
    _ingest(storage, records)
    storage.close()
    raw = _raw(tmp_path)
    try:
        codecs = dict(raw.execute("SELECT coalesce(payload_codec, 'plain'), count(*) FROM native_records GROUP BY 1"))
        sizes = [n for (n,) in raw.execute("SELECT length(data) FROM blocks ORDER BY block_id")]
        in_blocks = raw.execute("SELECT (SELECT coalesce(sum(length(payload)), 0) FROM native_records) + "
                                "(SELECT sum(length(data)) FROM blocks)").fetchone()[0]
        huge_block = raw.execute("SELECT payload_block FROM native_records WHERE source_ordinal = 300").fetchone()[0]
    finally:
        raw.close()
    assert codecs == {"plain": 18, codec.BLOCK: 282, codec.SHIPPED: 1}
    assert len(sizes) >= 2 and huge_block is None  # cut at MAX_BYTES; the huge payload is compressed alone
    alone = zstandard.ZstdCompressor(level=codec.LEVEL, dict_data=codec.shipped_dictionary())
    assert in_blocks < 0.8 * sum(len(alone.compress(r.payload_json.encode())) for r in records)

    storage = make_factory().open_project(ref())  # a fresh connection: nothing cached
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in records]
    stored = {r.source_ordinal: r for r in storage.native_transcripts.list_by_source("proj/a.jsonl")}
    for ordinal in random.Random(5).sample(range(301), 60):  # one at a time, blocks read out of order
        found = storage.native_transcripts.get_by_id(stored[ordinal].transcript_id)
        assert found is not None and found.payload_json == records[ordinal].payload_json
    usage = storage.storage_usage()
    assert usage.stored_payload_bytes >= sum(sizes)
    _ingest(storage, records[:50])  # a rescan finds them stored (read back from their blocks), adds nothing
    assert len(storage.native_transcripts.list_by_native_session("session-1")) == 301
    storage.close()


def test_small_batches_compress_alone_until_vacuum_packs_them(make_factory: MakeFactory, tmp_path: Path) -> None:
    """A hook appends a record or two at a time: too few for a block, until ``lcm vacuum`` packs them."""
    storage = make_factory().open_project(ref())
    records = [r for r in _records(40, seed=3) if r.source_ordinal % 17]
    for start in range(0, len(records), 2):
        _ingest(storage, records[start:start + 2])
    raw = _raw(tmp_path)
    try:
        assert raw.execute("SELECT count(*) FROM blocks").fetchone()[0] == 0
    finally:
        raw.close()
    storage.compact_storage()
    raw = _raw(tmp_path)
    try:
        placed = raw.execute("SELECT transcript_id, payload_block FROM native_records ORDER BY 1").fetchall()
        orphans = raw.execute("SELECT count(*) FROM blocks WHERE block_id NOT IN "
                              "(SELECT payload_block FROM native_records)").fetchone()[0]
    finally:
        raw.close()
    assert all(block is not None for _tid, block in placed) and orphans == 0
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in records]
    storage.compact_storage()  # packed already: nothing moves
    raw = _raw(tmp_path)
    try:
        assert raw.execute("SELECT transcript_id, payload_block FROM native_records ORDER BY 1").fetchall() == placed
    finally:
        raw.close()
    storage.close()


def test_a_block_read_inside_a_rolled_back_write_is_never_served_again(make_factory: MakeFactory) -> None:
    """The next write reuses the rolled-back block's id for other payloads: a cached copy would serve the
    rolled-back payloads in their place."""
    storage = make_factory().open_project(ref())
    rolled_back = _records(20, seed=1)

    def write_read_then_fail(repos: Repositories) -> None:
        _ingest(repos, rolled_back)
        assert [r.payload_json for r in repos.native_transcripts.list_by_native_session("session-1")] == \
            [r.payload_json for r in rolled_back]
        raise RuntimeError("boom")

    with pytest.raises(Exception, match="rolled back"):
        storage.transaction(write_read_then_fail)
    kept = _records(20, seed=2)
    _ingest(storage, kept)
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in kept]
    storage.close()


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"message {n}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 400))) for n in range(count)]


def _text_codecs(tmp_path: Path) -> dict[str, int]:
    raw = _raw(tmp_path)
    try:
        return dict(raw.execute("SELECT codec, count(*) FROM texts GROUP BY 1"))
    finally:
        raw.close()


def test_a_prepared_batch_stores_its_new_texts_in_blocks(make_factory: MakeFactory, tmp_path: Path) -> None:
    """An import prepares each batch: its new texts go into blocks, a text already stored is referred to, and
    every read (content, full-text search, vacuum) gets the exact texts back."""
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    first = [NewMessage(Role.USER, t, 1) for t in _texts(60, seed=1)]
    storage.conversations.append_messages(conv.conversation_id, first[:5])  # stored before: not in the blocks
    batch = first + [NewMessage(Role.ASSISTANT, "needle-4711 " + t, 1) for t in _texts(40, seed=2)]
    storage.prepare_writes(batch, [])
    stored = storage.transaction(lambda repos: repos.conversations.append_messages(conv.conversation_id, batch))
    assert _text_codecs(tmp_path) == {codec.BLOCK: 95, codec.SHIPPED: 5}
    ids = [m.message_id for m in stored]
    assert [m.content for m in storage.conversations.get_messages(ids)] == [m.content for m in batch]
    assert len(storage.lexical_search.search(SearchQuery("needle-4711", limit=100))) == 40
    storage.compact_storage()  # the blocks only texts refer to stay
    storage.close()
    storage = make_factory().open_project(ref())  # a new connection: nothing cached
    assert [m.content for m in storage.conversations.get_messages(ids)] == [m.content for m in batch]
    storage.close()


def test_texts_stored_alone_are_packed_by_vacuum(make_factory: MakeFactory, tmp_path: Path) -> None:
    """Messages appended without a prepared batch (a hook's turn) compress alone; ``lcm vacuum`` packs them."""
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    texts = _texts(30, seed=3)
    for text in texts:
        storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, text, 1)])
    assert set(_text_codecs(tmp_path)) == {codec.SHIPPED}
    storage.compact_storage()
    assert _text_codecs(tmp_path) == {codec.BLOCK: 30}
    assert [m.content for m in storage.conversations.list_messages(conv.conversation_id)] == texts
    storage.close()


@pytest.mark.parametrize("damage", ["missing", "garbled"])
@pytest.mark.parametrize("reading", ["native records", "message texts"])
def test_a_damaged_block_is_a_typed_error(make_factory: MakeFactory, tmp_path: Path, reading: str, damage: str
                                          ) -> None:
    """Python reads a native record's block; a message's text is read in SQL, through ``lcm_text``: either way a
    missing or garbled block is a ``StorageUnavailableError`` naming the damage, not a driver error."""
    storage = make_factory().open_project(ref())
    read: Callable[[ProjectStorage], object]
    if reading == "native records":
        _ingest(storage, _records(20))
        read = lambda s: s.native_transcripts.list_by_native_session("session-1")  # noqa: E731
    else:
        conv = storage.conversations.create_conversation("s")
        batch = [NewMessage(Role.USER, t, 1) for t in _texts(10, seed=4)]
        storage.prepare_writes(batch, [])
        stored = storage.transaction(lambda repos: repos.conversations.append_messages(conv.conversation_id, batch))
        read = lambda s: s.conversations.get_messages([stored[0].message_id])  # noqa: E731
    storage.close()
    raw = _raw(tmp_path)
    if damage == "missing":
        raw.execute("DELETE FROM blocks")
    else:
        raw.executemany("UPDATE blocks SET data = ? WHERE block_id = ?",
                        [(data[:20] + bytes(10) + data[30:], block_id)
                         for block_id, data in raw.execute("SELECT block_id, data FROM blocks").fetchall()])
    raw.commit()
    raw.close()
    storage = make_factory().open_project(ref())
    with pytest.raises(StorageUnavailableError, match="damaged") as raised:
        read(storage)
    assert raised.value.code == ("block_missing" if damage == "missing" else "corrupt")
    storage.close()


def test_vacuum_repacks_blocks_of_an_older_codec_and_deletes_them(make_factory: MakeFactory, tmp_path: Path) -> None:
    """Blocks written with another codec than the newest (here: plain zstd, as before the shipped dictionary)
    are repacked by vacuum, their texts and payloads into new blocks, and the old blocks are deleted."""
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    batch = [NewMessage(Role.USER, t, 1) for t in _texts(300, seed=5)]
    storage.prepare_writes(batch, [])
    storage.transaction(lambda repos: repos.conversations.append_messages(conv.conversation_id, batch))
    records = _records(300, seed=6)
    _ingest(storage, records)
    storage.close()
    raw = _raw(tmp_path)
    try:
        shipped = zstandard.ZstdDecompressor(dict_data=codec.shipped_dictionary())
        older = [(zstandard.ZstdCompressor().compress(shipped.decompress(data)), block_id)
                 for block_id, data in raw.execute("SELECT block_id, data FROM blocks").fetchall()]
        raw.executemany("UPDATE blocks SET codec = 'zstd', data = ? WHERE block_id = ?", older)
        raw.commit()
    finally:
        raw.close()
    storage = make_factory().open_project(ref())
    storage.compact_storage()
    raw = _raw(tmp_path)
    try:
        after = dict(raw.execute("SELECT block_id, codec FROM blocks"))
        referenced = blocks.text_blocks(raw) | {b for (b,) in raw.execute(
            "SELECT payload_block FROM native_records WHERE payload_block IS NOT NULL")}
    finally:
        raw.close()
    assert older and not {block_id for _data, block_id in older} & set(after)  # every old block went
    assert set(after.values()) == {codec.SHIPPED} and set(after) == referenced
    assert [m.content for m in storage.conversations.list_messages(conv.conversation_id)] == [m.content for m in batch]
    assert [r.payload_json for r in storage.native_transcripts.list_by_native_session("session-1")] == \
        [r.payload_json for r in records]
    storage.close()
