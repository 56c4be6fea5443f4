"""Compression of immutable payloads (native records, message parts), with the codec named per row.

A row's codec column says how its value is stored:

* ``NULL``: plain text (short values, and every row written before schema version 2);
* ``zstd``: zstandard without a dictionary;
* ``zstd:<id>``: zstandard with the project's trained dictionary ``<id>`` (table ``codec_dictionaries``);
* ``zstd:shipped-1``: zstandard with the dictionary shipped in this package (``SHIPPED_FILE``): the
  canonical JSON of the transcript formats' sample records (``formats/samples``), the fixed structure every
  record repeats (keys in sorted order, record and block types, usage counters). A project compresses with
  it from its first record, before it has a dictionary of its own: on one copy of the real sessions native
  payloads go from 0.49 of their size (zstd alone) to 0.34. The file never changes (rows name it); a better
  one would ship under a new name beside it;
* ``zlib``: stdlib zlib, written only where the ``zstandard`` package is missing;
* ``block``: a value stored in a block of its batch's values (``blocks.py``), the block (table ``blocks``)
  compressed with one of the codecs above. A native record holds its byte span ``REF`` of the block's plain
  bytes (the block in ``payload_block``); a ``texts`` row holds ``TEXT_REF``, the block's id and that span.

A project trains its own dictionary from the first ``TRAIN_BYTES`` of native payloads and message texts
one connection stored (an import) or from ``TRAIN_ROWS`` stored rows (``lcm vacuum``, once the project
stores at least ``VACUUM_TRAIN_BYTES``: a 112 KiB dictionary makes a smaller project bigger). The first
values of an import all come from its first sessions, so ``lcm vacuum`` trains a newer dictionary from
``TRAIN_ROWS`` rows drawn from the whole project whenever the project has grown ``RETRAIN_GROWTH`` times
since the last one, and rewrites the rows with it. A trained dictionary is kept only when it compresses
every ``HOLDOUT``-th sample, left out of its training, at most ``1 - MIN_GAIN`` of what the codec in use
makes of them (one trained from few or too varied samples can do worse than the shipped one). Digests,
ingest keys and compare-and-swap checks are computed over the plain text by the callers; only the stored
bytes change.
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import struct
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api import StorageUnavailableError

from .errors import BACKEND

try:
    import zstandard
except ImportError:  # pragma: no cover - zstandard is a declared dependency; zlib keeps LCM usable
    zstandard = None  # type: ignore[assignment]

MIN_BYTES = 96
"""Values shorter than this stay plain: compression would save a few bytes and cost a call."""
LEVEL = 3
DICTIONARY_BYTES = 112 * 1024
TRAIN_BYTES = 8 * 2**20
"""Payload and text bytes an import compresses without a dictionary, keeping them as samples, before it
trains the project's first one from them. Counting records instead (500 of them) let an import whose worker
processes started on small files train from 222 KB of tiny records: a 9 KB dictionary that left payloads at
0.41 of their size, against 0.15 from 2 MiB of the same project's records (0.24 from 726 KB). Since values
are compressed in blocks, a dictionary saves about 9% of them, less than its own 112 KiB on a project under
about 6 MB: trained after 2 MiB, it left six projects of 1-3 MB at 0.867 stored bytes per transcript byte
against 0.852 after 8 MiB (5.8 and 50 MB of rewritten sessions: the same either way)."""
TRAIN_ROWS = 2000
"""Stored rows ``lcm vacuum`` draws from the whole project to train a dictionary."""
RETRAIN_GROWTH = 2
SAMPLE_BYTES = 8 * 2**20
"""At most this much of the sampled values is kept in memory for training."""
MIN_TRAIN_SAMPLES = 100
HOLDOUT = 10
MIN_GAIN = 0.1
VACUUM_TRAIN_BYTES = 128 * 1024
"""Stored (compressed) payload bytes a project needs before ``lcm vacuum`` trains it a dictionary."""
SHIPPED = "zstd:shipped-1"
SHIPPED_FILE = Path(__file__).with_name("transcript_dictionary.jsonl")
SHIPPED_SHA256 = "0415f11fe0605dd737bbbe51fb394312296d89e4a3561ca3a0806ce2ce0a655b"
"""Rows compressed with the shipped dictionary are readable only with exactly these bytes."""
BLOCK = "block"
REF = struct.Struct("<II")
"""A block row's ``payload``: the ``(start, length)`` of its UTF-8 bytes in its block's plain bytes."""
TEXT_REF = struct.Struct("<qII")
"""A block ``texts`` row's ``data``: ``(block_id, start, length)``."""
CACHED_BLOCKS = 8
"""Decoded blocks a connection keeps (the most recently read): reading a batch's records one by one
decompresses their block once."""


@functools.cache
def shipped_dictionary() -> Any:
    """The shipped raw-content dictionary (checked against ``SHIPPED_SHA256``); a missing or altered file is a
    StorageUnavailableError (rows compressed with it could not be read back)."""
    try:
        data = SHIPPED_FILE.read_bytes()
    except OSError:
        data = b""
    if hashlib.sha256(data).hexdigest() != SHIPPED_SHA256:
        raise StorageUnavailableError(f"{SHIPPED_FILE.name}, the compression dictionary this version of LCM ships, "
                                      "is missing or altered: reinstall LCM", backend=BACKEND, domain="codec",
                                      code="codec_dictionary")
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


class Codec:
    """Compressors of one project connection: the newest dictionary for writing, every one for reading.

    Used only inside the connection's operations, which ``Database`` serializes: no lock of its own.
    """

    def __init__(self) -> None:
        self._writer: tuple[str, Callable[[bytes], bytes]] | None = None
        self._shipped: Any = None
        self._samples: list[bytes] = []
        self._samples_bytes = 0
        self._readers: dict[str, Any] = {}
        self._loaded = False
        self._blocks: OrderedDict[int, bytes] = OrderedDict()
        self._declined = False

    def encode_many(self, conn: sqlite3.Connection, values: Sequence[str | None], *,
                    sample: bool = False) -> tuple[str | None, list[Any]]:
        """One codec for a row's values: ``(None, values)`` when they are short, else compressed blobs.
        ``sample``: the values may train the project's dictionary (native payloads)."""
        if sum(len(v) for v in values if v is not None) < MIN_BYTES:
            return None, list(values)
        name, compress = self._compressor(conn, sample)
        return name, [None if v is None else compress(v.encode("utf-8")) for v in values]

    def _compressor(self, conn: sqlite3.Connection, sample: bool) -> tuple[str, Callable[[bytes], bytes]]:
        if zstandard is None:
            return "zlib", _zlib
        self._load(conn)
        if self._writer is not None:
            return self._writer
        return SHIPPED, self._sampling if sample else self._shipped_compressor().compress

    def _sampling(self, data: bytes) -> bytes:
        """Compress with the shipped dictionary, keeping the value as a training sample until there are enough."""
        self._sample(data)
        return bytes(self._shipped_compressor().compress(data))

    def _sample(self, data: bytes) -> None:
        if self._samples_bytes < SAMPLE_BYTES and not self._declined:
            self._samples.append(data)
            self._samples_bytes += len(data)

    def encode_block(self, conn: sqlite3.Connection, values: Sequence[str]) -> tuple[str, bytes, list[bytes]]:
        """Native payloads compressed together: ``(codec, data, refs)``, each value's ``REF`` into the
        block's plain bytes. Each value may train the project's dictionary, as ``encode_many`` samples."""
        plain = [v.encode("utf-8") for v in values]
        name, compress = self._compressor(conn, False)
        if name == SHIPPED:
            for data in plain:
                self._sample(data)
        refs, start = [], 0
        for data in plain:
            refs.append(REF.pack(start, len(data)))
            start += len(data)
        return name, bytes(compress(b"".join(plain))), refs

    def block_value(self, conn: sqlite3.Connection, block_id: int, ref: bytes) -> str:
        """The plain text a block row refers to (its block read and decompressed once while it is recent;
        block ids are never reused, so a cached block is the same in every process)."""
        try:
            return self._block_slice(conn, block_id, *REF.unpack(ref)).decode("utf-8")
        except UNDECODABLE:
            raise _damaged(BLOCK) from None

    def _block_slice(self, conn: sqlite3.Connection, block_id: int, start: int, length: int) -> bytes:
        plain = self._blocks.get(block_id)
        if plain is None:
            row = conn.execute("SELECT codec, data FROM blocks WHERE block_id = ?", (block_id,)).fetchone()
            if row is None:
                raise StorageUnavailableError(f"compressed block {block_id} is missing: the database is damaged",
                                              backend=BACKEND, domain="codec", code="block_missing")
            plain = self._plain_bytes(conn, row[0], row[1])
            self._blocks[block_id] = plain
            if len(self._blocks) > CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(block_id)
        if start + length > len(plain):
            raise _damaged(BLOCK)
        return plain[start:start + length]

    def train(self, conn: sqlite3.Connection, samples: Sequence[bytes] = (), *, records: int = 0,
              newer: bool = False, stored: int | None = None) -> bool:
        """Store a dictionary trained from ``samples`` (or what this connection compressed so far) when the
        project has none yet, or ``newer`` (a better one from more of its rows), and there are enough;
        later writes use it. ``records``: how many native records the project held; ``stored``: the
        compressed bytes it would rewrite (``lcm vacuum``), which must shrink by more than the dictionary's
        own size. True when stored."""
        chosen = list(samples) or self._samples
        if zstandard is None or len(chosen) < MIN_TRAIN_SAMPLES:
            return False
        self._samples, self._samples_bytes = [], 0
        if newer or conn.execute("SELECT 1 FROM codec_dictionaries LIMIT 1").fetchone() is None:
            held = chosen[::HOLDOUT]
            try:
                fit = [sample for n, sample in enumerate(chosen) if n % HOLDOUT]
                trained = zstandard.train_dictionary(DICTIONARY_BYTES, list[Any](fit), level=LEVEL)
            except zstandard.ZstdError:
                return False  # too little variety to train from: keep compressing without a dictionary
            if not self._gains(conn, trained, held, stored):
                self._declined = True  # this connection samples and trains no more
                return False
            conn.execute("INSERT INTO codec_dictionaries (codec, dictionary, records) VALUES ('zstd', ?, ?)",
                         (trained.as_bytes(), records))
        self._load(conn, again=True)
        return True

    def _gains(self, conn: sqlite3.Connection, trained: Any, held: Sequence[bytes], stored: int | None) -> bool:
        """Whether ``trained`` compresses the held-out samples enough better than the codec in use: by
        ``MIN_GAIN`` each compressed alone, and, given the ``stored`` bytes it would rewrite, by more than
        its own size on them compressed together as the rows' blocks are (on a 0.9 MB project a 112 KiB
        dictionary saved 68 KiB: the file grew)."""
        current = self._compressor(conn, False)[1]
        candidate = _zstd(trained).compress
        if sum(len(candidate(s)) for s in held) > (1 - MIN_GAIN) * sum(len(current(s)) for s in held):
            return False
        if stored is None:
            return True
        together = b"".join(held)
        now = len(current(together))
        return (now - len(candidate(together))) / now * stored > len(trained.as_bytes())

    def _shipped_compressor(self) -> Any:
        if self._shipped is None:
            self._shipped = _zstd(shipped_dictionary())
        return self._shipped

    def refresh(self, conn: sqlite3.Connection) -> None:
        """While this connection has no dictionary to write with, use one another connection trained since
        (in a parallel import the first process to have sampled enough trains it for all)."""
        if zstandard is None or self._writer is not None:
            return
        self._load(conn, again=True)
        if self._writer is not None:
            self._samples, self._samples_bytes = [], 0

    def ready_to_train(self) -> bool:
        return self._writer is None and self._samples_bytes >= TRAIN_BYTES

    def _load(self, conn: sqlite3.Connection, *, again: bool = False) -> None:
        """Read the project's dictionaries (once per connection, or ``again`` after training one)."""
        if self._loaded and not again:
            return
        for dict_id, blob in conn.execute("SELECT dict_id, dictionary FROM codec_dictionaries ORDER BY dict_id"):
            data = zstandard.ZstdCompressionDict(blob)
            self._readers[f"zstd:{dict_id}"] = zstandard.ZstdDecompressor(dict_data=data)
            self._writer = (f"zstd:{dict_id}", _zstd(data).compress)
        self._loaded = True

    def newest(self, conn: sqlite3.Connection) -> str | None:
        """The codec new values get: the project's newest dictionary, else the shipped one (None without
        zstandard: nothing to rewrite into)."""
        if zstandard is None:
            return None
        self._load(conn, again=True)
        return self._writer[0] if self._writer is not None else SHIPPED

    def plain_size(self, conn: sqlite3.Connection, codec: str | None, value: Any) -> int:
        """Bytes of a stored value's plain UTF-8 text (zstd frames record it in their header)."""
        if codec is None:
            return len(value.encode("utf-8")) if isinstance(value, str) else len(value)
        if codec == BLOCK:
            return int(REF.unpack_from(value, len(value) - REF.size)[1])  # REF, or TEXT_REF ending in one
        if codec.startswith("zstd") and zstandard is not None:
            size = zstandard.frame_content_size(value)
            if size >= 0:
                return int(size)
        return len(self.decode(conn, codec, value).encode("utf-8"))

    def decode(self, conn: sqlite3.Connection, codec: str | None, value: Any) -> Any:
        """The plain text of a stored value (``None`` and plain rows pass through)."""
        if codec is None or value is None:
            return value
        try:
            return self._plain_bytes(conn, codec, value).decode("utf-8")
        except UNDECODABLE:
            raise _damaged(codec) from None

    def _plain_bytes(self, conn: sqlite3.Connection, codec: str, value: bytes) -> bytes:
        if codec == "zlib":
            return zlib.decompress(value)
        if codec == BLOCK:  # a text's: its block and span (a native record's rows go through block_value)
            return self._block_slice(conn, *TEXT_REF.unpack(value))
        if zstandard is None:
            raise RuntimeError("this database holds zstd-compressed rows: install the zstandard package")
        if codec in ("zstd", SHIPPED):
            if codec not in self._readers:  # a decompressor per connection: creating one costs more than a read
                self._readers[codec] = zstandard.ZstdDecompressor(
                    dict_data=shipped_dictionary() if codec == SHIPPED else None)
        elif codec not in self._readers:
            self._load(conn, again=True)
        return bytes(self._readers[codec].decompress(value))


def _zlib(data: bytes) -> bytes:
    return zlib.compress(data, 6)


def _zstd(dictionary: Any) -> Any:
    """A compressor with ``dictionary`` whose frames end in a checksum of their content (4 bytes): a damaged
    frame then fails to decompress instead of giving other text (one in a block garbles many rows)."""
    return zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary, write_checksum=True)


UNDECODABLE: tuple[type[Exception], ...] = (
    zlib.error, struct.error, KeyError, TypeError, ValueError, *(() if zstandard is None else (zstandard.ZstdError,)))
"""What decoding a damaged value raises (bad zstd or zlib data, a span or reference of the wrong size,
bytes that are not UTF-8, a codec no dictionary names)."""


def _damaged(codec: str) -> StorageUnavailableError:
    return StorageUnavailableError(f"a stored value ({codec}) cannot be decoded: the database is damaged",
                                   backend=BACKEND, domain="codec", code="corrupt")
