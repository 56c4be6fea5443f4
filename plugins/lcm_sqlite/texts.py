"""Message text stored once per project (schema version 5).

A message's ``content`` of at least ``codec.MIN_BYTES`` characters lives in ``texts``, keyed by its
SHA-256 and compressed with the project's codec (a prepared batch's new texts in blocks, ``blocks.py``),
and the message refers to it (``messages.text_id``; its own ``content`` column is then empty): a tool
output that many messages carry (a file read again and again) is stored once. Shorter content stays
plain in ``messages.content``. The view ``message_texts`` gives every message with its full text
(``lcm_text`` decompresses: ``Database`` registers it): reads, substring and regex search and the
full-text indexes (external content) go through it.

A native record linked to such a message is stored without that text too, or without the part of it
one of the message's parts holds (a tool call's arguments): ``payload_text_id``, ``payload_text_at``,
``payload_text_quoted``, ``payload_text_start``, ``payload_text_length``. Being immutable, it keeps the
``texts`` row alive after its message is deleted.

A message part keeps no second copy of what its message already holds: its ``text`` is a span
``(text_start, text_length)`` of the message's content when it occurs there, and its ``raw_json`` is
stored with that text cut out (``raw_text_at``: where it goes back, verbatim or, ``raw_text_quoted``,
as a JSON string literal). ``rebuild_part`` restores both exactly.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from . import blocks
from .codec import Codec
from .encodings import Prepared, digest, is_shared, paste
from .statements import chunks, marks

TABLE = ("CREATE TABLE texts (text_id INTEGER PRIMARY KEY AUTOINCREMENT, sha256 BLOB NOT NULL UNIQUE, codec TEXT, "
         "data BLOB NOT NULL)")
INDEXES = ("CREATE INDEX messages_text ON messages(text_id) WHERE text_id IS NOT NULL",
           "CREATE INDEX native_records_text ON native_records(payload_text_id) WHERE payload_text_id IS NOT NULL")
VIEW = """
CREATE VIEW message_texts AS
SELECT m.message_id AS message_id, m.message_id AS rowid, m.conversation_id AS conversation_id, m.seq AS seq,
       m.role AS role, m.token_count AS token_count, m.created_at AS created_at,
       CASE WHEN m.text_id IS NULL THEN m.content ELSE lcm_text(x.codec, x.data) END AS content
FROM messages m LEFT JOIN texts x ON x.text_id = m.text_id
"""
PARTS = """
CREATE TABLE message_parts (
  message_id INTEGER NOT NULL REFERENCES messages(message_id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  kind TEXT NOT NULL,
  tool_call_id TEXT,
  tool_name TEXT,
  is_error INTEGER NOT NULL DEFAULT 0,
  metadata TEXT,
  text_start INTEGER,
  text_length INTEGER,
  raw_text_at INTEGER,
  raw_text_quoted INTEGER,
  codec TEXT,
  text,
  raw_json,
  UNIQUE (message_id, ordinal)
)"""
"""A rowid table: a WITHOUT ROWID row over ~1 KB spills into a 4 KiB overflow page that it mostly wastes."""
PART_COLUMNS = ("message_id, ordinal, kind, tool_call_id, tool_name, is_error, metadata, text_start, text_length, "
                "raw_text_at, raw_text_quoted, codec, text, raw_json")

StoredPart = tuple[Any, ...]
"""A ``message_parts`` row in ``PART_COLUMNS`` order."""


RECENT = 4096
"""At most this many texts a connection stored are remembered (for the native records that follow);
ids are never reused (AUTOINCREMENT), so a remembered id names the same text in every process."""


def store(conn: sqlite3.Connection, codec: Codec, contents: Sequence[str], recent: dict[int, str],
          prepared: Prepared | None = None) -> list[int | None]:
    """The ``texts`` id of each content that is stored there (None: kept in the message row), adding the
    ones not stored yet inside the caller's write transaction. ``recent`` remembers them (the caller
    forgets it when the transaction rolls back); ``prepared`` may hold their digests and encodings."""
    ready = prepared or Prepared()
    keys = {ready.digest(text): text for text in contents if is_shared(text)}
    found: dict[bytes, int] = {}
    for group in chunks(list(keys)):
        found.update(conn.execute(f"SELECT sha256, text_id FROM texts WHERE sha256 IN ({marks(group)})", group))
    for key, text in keys.items():
        if key not in found:
            name, data = ready.text_data(conn, codec, text)
            cur = conn.execute("INSERT INTO texts (sha256, codec, data) VALUES (?, ?, ?)", (key, name, data))
            assert cur.lastrowid is not None
            found[key] = cur.lastrowid
    if len(recent) + len(keys) > RECENT:
        recent.clear()
    recent.update((found[key], text) for key, text in keys.items())
    return [found[ready.digest(text)] if is_shared(text) else None for text in contents]


def find(conn: sqlite3.Connection, text: str) -> int | None:
    """The id of ``text`` in ``texts``, or None when no message stores it there."""
    row = conn.execute("SELECT text_id FROM texts WHERE sha256 = ?", (digest(text),)).fetchone()
    return None if row is None else int(row[0])


def forget_unused(conn: sqlite3.Connection, text_ids: set[int]) -> None:
    """Delete those of ``text_ids`` no message refers to any more (their messages were deleted)."""
    conn.executemany("DELETE FROM texts WHERE text_id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE text_id = ?) "
                     "AND NOT EXISTS (SELECT 1 FROM native_records WHERE payload_text_id = ?)",
                     [(text_id,) * 3 for text_id in sorted(text_ids)])


def part_row(conn: sqlite3.Connection, codec: Codec, content: str, message_id: int, ordinal: int, kind: str,
             text: str | None, tool_call_id: str | None, tool_name: str | None, is_error: bool,
             raw_json: str | None, metadata: str | None, prepared: Prepared | None = None) -> StoredPart:
    """A part's row without what its message's ``content`` already holds."""
    tail = (prepared or Prepared()).part(conn, codec, content, text, raw_json)
    return (message_id, ordinal, kind, tool_call_id, tool_name, int(is_error), metadata, *tail)


def rebuild_part(conn: sqlite3.Connection, codec: Codec, row: StoredPart, content: str | None
                 ) -> tuple[str | None, str | None]:
    """The exact ``(text, raw_json)`` of a stored part; ``content`` is its message's (needed for a span)."""
    start, length, raw_at, quoted, name = row[7:12]
    text = codec.decode(conn, name, row[12])
    if start is not None:
        assert content is not None
        text = content[start:start + length]
    raw = codec.decode(conn, name, row[13])
    if raw_at is not None:
        raw = paste(raw, raw_at, quoted, text)
    return text, raw


def payload_cut(payload: str, text_id: int | None, text: str | None, spans: Sequence[tuple[int, int]] = (),
                prepared: Prepared | None = None) -> tuple[str, tuple[Any, ...]]:
    """A native payload as it is stored: ``(rest, (text_id, at, quoted, start, length))``. When it holds its
    message's shared text (``text_id``, ``text``), or one of the ``spans`` of it (its parts' texts), that
    piece is cut out of ``rest`` (``start``/``length`` None: the whole text)."""
    shared = text if text_id is not None else None
    rest, at, quoted, start, length = (prepared or Prepared()).payload(payload, shared, spans)
    return rest, (None if at is None else text_id, at, quoted, start, length)


def rebuild_payload(conn: sqlite3.Connection, codec: Codec, name: str | None, value: Any, block: int | None,
                    at: int | None, quoted: int | None, start: int | None, length: int | None,
                    text_codec: str | None, text_data: Any) -> str:
    """The exact payload ``payload_cut`` took apart (``name``/``value``/``block``: how its rest is stored,
    ``text_codec``/``text_data``: its ``texts`` row)."""
    rest = blocks.plain(conn, codec, name, value, block)
    if at is None:
        return rest
    text = codec.decode(conn, text_codec, text_data)
    if start is not None and length is not None:
        text = text[start:start + length]
    return paste(rest, at, quoted or 0, text)


def remembered(conn: sqlite3.Connection, codec: Codec, recent: dict[int, str], text_id: int) -> str:
    """The text of ``text_id``: from ``recent`` (what this connection stored lately) or read."""
    found = recent.get(text_id)
    if found is None:
        row = conn.execute("SELECT codec, data FROM texts WHERE text_id = ?", (text_id,)).fetchone()
        found = str(codec.decode(conn, row[0], row[1]))
    return found


def contents(conn: sqlite3.Connection, message_ids: Sequence[int]) -> dict[int, str]:
    """Full content of the given messages."""
    out: dict[int, str] = {}
    for group in chunks(sorted(set(message_ids))):
        out.update(conn.execute(f"SELECT message_id, content FROM message_texts WHERE message_id IN "
                                f"({marks(group)})", group))
    return out
