"""Native payloads compressed in blocks, one or more per write batch (schema version 7).

A native record's payload compressed alone leaves zstd little to refer back to: on a small project the
rows averaged 531 stored bytes, and the same payloads compressed a batch (100 records) at a time took
0.58 of that. So the payloads a batch stores that are at least ``codec.MIN_BYTES`` long go into blocks of
at most ``MAX_BYTES`` characters (``native_blocks``: one frame, compressed with the project's codec),
and each row keeps ``payload_codec = 'block'``, its block (``payload_block``) and its byte span in the
block's plain bytes (``payload``, ``codec.REF``). A batch with fewer than ``MIN_VALUES`` of them (a hook
appending a record or two) compresses each row alone, as before; ``lcm vacuum`` packs those rows, and
the rows of blocks written with an older codec, into new blocks (``maintenance``) and deletes the
blocks no row refers to (``forget_unreferenced``). Reading a row decompresses its block once per
connection while it stays among the recently read (``Codec.block_value``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .codec import BLOCK, MIN_BYTES, Codec

if TYPE_CHECKING:
    from .encodings import Prepared

MIGRATION = """
CREATE TABLE native_blocks (block_id INTEGER PRIMARY KEY AUTOINCREMENT, codec TEXT NOT NULL, data BLOB NOT NULL);
ALTER TABLE native_records ADD COLUMN payload_block INTEGER;
"""
"""``AUTOINCREMENT``: a block id is never reused, so a connection's cached block stays that block."""
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
        block_id = conn.execute("INSERT INTO native_blocks (codec, data) VALUES (?, ?)", (name, data)).lastrowid
        for index, ref in zip(group, refs, strict=True):
            out[index] = (BLOCK, ref, block_id)
    return out


def plain(conn: sqlite3.Connection, codec: Codec, name: str | None, value: Any, block: int | None) -> str:
    """A stored payload's plain text, whichever way ``store`` kept it."""
    return codec.block_value(conn, block, value) if block is not None else str(codec.decode(conn, name, value))


def forget_unreferenced(conn: sqlite3.Connection) -> int:
    """Delete the blocks no native record refers to any more (``lcm vacuum`` moved their rows)."""
    return conn.execute("DELETE FROM native_blocks WHERE block_id NOT IN "
                        "(SELECT payload_block FROM native_records WHERE payload_block IS NOT NULL)").rowcount
