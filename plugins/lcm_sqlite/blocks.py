"""Native payloads (schema version 7) and message texts (version 8) compressed in blocks of a write batch.

A value compressed alone leaves zstd little to refer back to: on a small project native payloads
averaged 531 stored bytes, and the same payloads compressed a batch (100 records) at a time took 0.58
of that; a text compressed alone also wastes the rest of its last page (on 5.8 MB of rewritten
sessions ``texts`` took 0.95 MB of pages for 0.72 MB of compressed data). So the native payloads a
batch stores, and the new texts of a batch prepared ahead of its transaction (``encodings.Prepared``),
that are at least ``codec.MIN_BYTES`` long go into blocks of at most ``MAX_BYTES`` characters (table
``blocks``: one frame, compressed with the project's codec). A native record keeps ``payload_codec =
'block'``, its block (``payload_block``) and its byte span in the block's plain bytes (``payload``,
``codec.REF``); a text keeps ``codec = 'block'`` and ``codec.TEXT_REF`` (block id and span) as its
``data``. Fewer than ``MIN_VALUES`` of them (a hook appending a record or two) are compressed each alone,
as before; ``lcm vacuum`` packs those rows, and the rows of blocks written with an older codec, into new
blocks (``maintenance``) and deletes the blocks no row refers to (``forget_unreferenced``). A deleted
message's text stays in its block until no row refers to the block. Reading a row decompresses its
block once per connection while it stays among the recently read (``Codec.block_value``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .codec import BLOCK, MIN_BYTES, REF, TEXT_REF, Codec

if TYPE_CHECKING:
    from .encodings import Prepared

MIGRATION = """
CREATE TABLE native_blocks (block_id INTEGER PRIMARY KEY AUTOINCREMENT, codec TEXT NOT NULL, data BLOB NOT NULL);
ALTER TABLE native_records ADD COLUMN payload_block INTEGER;
"""
"""``AUTOINCREMENT``: a block id is never reused, so a connection's cached block stays that block."""
TEXTS_MIGRATION = "ALTER TABLE native_blocks RENAME TO blocks"
"""Version 8: the blocks hold message texts too (a text's block is in its ``data``: no column to add)."""
MIN_VALUES = 4
MAX_BYTES = 256 * 1024
"""Plain characters per block at most: reading one record decompresses its whole block."""

StoredPayload = tuple[str | None, Any, int | None]
"""A payload's ``(payload_codec, payload, payload_block)`` columns."""


def groups(values: Sequence[str]) -> list[list[int]]:
    """The indices of the values long enough to compress, in order, cut into blocks of at most
    ``MAX_BYTES`` characters (a longer value is a block of its own)."""
    out: list[list[int]] = []
    size = MAX_BYTES
    for index, value in enumerate(values):
        if len(value) < MIN_BYTES:
            continue
        if size + len(value) > MAX_BYTES:
            out.append([])
            size = 0
        out[-1].append(index)
        size += len(value)
    return out


def store(conn: sqlite3.Connection, codec: Codec, values: Sequence[str], prepared: Prepared) -> list[StoredPayload]:
    """Each payload's stored columns, inserting the blocks they go into (``prepared`` may hold them
    compressed): short ones stay plain, the rest in blocks or, in groups too small, alone."""
    out: list[StoredPayload] = [(None, value, None) for value in values]
    for group in groups(values):
        if len(group) < MIN_VALUES:
            for index in group:
                name, data = prepared.alone(conn, codec, values[index])
                out[index] = (name, data, None)
            continue
        name, data, refs = prepared.block(conn, codec, [values[index] for index in group])
        block_id = insert(conn, name, data)
        for index, ref in zip(group, refs, strict=True):
            out[index] = (BLOCK, ref, block_id)
    return out


def insert(conn: sqlite3.Connection, name: str, data: bytes) -> int:
    """Store a compressed block; its new id."""
    block_id = conn.execute("INSERT INTO blocks (codec, data) VALUES (?, ?)", (name, data)).lastrowid
    assert block_id is not None
    return block_id


def as_text(stored: StoredPayload) -> tuple[str | None, Any]:
    """A value ``store`` kept, as a ``texts`` row's ``(codec, data)`` (the block goes into the data)."""
    name, value, block = stored
    return (name, value) if block is None else (BLOCK, text_ref(block, value))


def text_ref(block_id: int, ref: bytes) -> bytes:
    """A ``texts`` row's ``data`` for the span ``ref`` of block ``block_id``."""
    return TEXT_REF.pack(block_id, *REF.unpack(ref))


def plain(conn: sqlite3.Connection, codec: Codec, name: str | None, value: Any, block: int | None) -> str:
    """A stored payload's plain text, whichever way ``store`` kept it."""
    return codec.block_value(conn, block, value) if block is not None else str(codec.decode(conn, name, value))


def text_blocks(conn: sqlite3.Connection) -> set[int]:
    """The blocks ``texts`` rows refer to."""
    return {TEXT_REF.unpack(data)[0] for (data,) in conn.execute("SELECT data FROM texts WHERE codec = ?", (BLOCK,))}


def forget_unreferenced(conn: sqlite3.Connection) -> int:
    """Delete the blocks no native record or text refers to any more (``lcm vacuum`` moved their rows)."""
    texts = text_blocks(conn)
    unused = [block_id for (block_id,) in conn.execute(
        "SELECT block_id FROM blocks WHERE block_id NOT IN "
        "(SELECT payload_block FROM native_records WHERE payload_block IS NOT NULL)") if block_id not in texts]
    conn.executemany("DELETE FROM blocks WHERE block_id = ?", [(block_id,) for block_id in unused])
    return len(unused)
