"""Schema version 5: message text stored once (``texts.py``).

Version 4 kept each message's content plain in ``messages.content`` and, in ``message_parts`` (a
WITHOUT ROWID table whose rows over ~1 KB wasted most of an overflow page), a compressed copy of each
part's text and of its raw JSON, which repeats that text again. The migration moves content of at
least ``codec.MIN_BYTES`` into ``texts`` (one row per distinct text), rebuilds the parts as spans of
their message's content, and checks each batch of ``BATCH`` messages record by record (content, and
every field of every part, as version 4 returned them) before it goes on; the old parts table is
dropped only after every part arrived. All of it runs inside the schema transaction: a failed check or
an interruption leaves version 4 as it was, and the next open starts over. The full-text indexes are
rebuilt over the ``message_texts`` view by ``fts.install`` afterwards.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from lcm_framework.plugin_api import StorageUnavailableError

from . import texts
from .codec import Codec
from .errors import BACKEND
from .statements import marks

BATCH = 500
_OLD_PARTS = "message_id, ordinal, kind, text, tool_call_id, tool_name, is_error, raw_json, metadata, codec"


def migrate(conn: sqlite3.Connection) -> None:
    """Version 4 to 5, inside the caller's transaction; raises (the caller rolls back) if a record differs."""
    codec = Codec()
    conn.execute(texts.TABLE)
    conn.execute("ALTER TABLE messages ADD COLUMN text_id INTEGER REFERENCES texts(text_id)")
    for column in ("payload_text_id INTEGER REFERENCES texts(text_id)", "payload_text_at INTEGER",
                   "payload_text_quoted INTEGER", "payload_text_start INTEGER", "payload_text_length INTEGER"):
        conn.execute(f"ALTER TABLE native_records ADD COLUMN {column}")
    conn.execute("ALTER TABLE codec_dictionaries ADD COLUMN records INTEGER")  # records when trained
    for index in texts.INDEXES:
        conn.execute(index)
    conn.execute(texts.VIEW)
    conn.execute("ALTER TABLE message_parts RENAME TO message_parts_v4")
    conn.execute(texts.PARTS)
    after = -1
    while True:
        batch = conn.execute("SELECT message_id, content FROM messages WHERE message_id > ? ORDER BY message_id "
                             "LIMIT ?", (after, BATCH)).fetchall()
        if not batch:
            break
        after = batch[-1][0]
        _move_batch(conn, codec, dict(batch))
    moved = conn.execute("SELECT count(*) FROM message_parts").fetchone()[0]
    if moved != conn.execute("SELECT count(*) FROM message_parts_v4").fetchone()[0]:
        _failed()
    conn.execute("DROP TABLE message_parts_v4")
    conn.execute("DELETE FROM meta WHERE key = 'fts_tier'")  # fts.install rebuilds the indexes over the view


def _move_batch(conn: sqlite3.Connection, codec: Codec, contents: dict[int, str]) -> None:
    ids = list(contents)
    text_ids = texts.store(conn, codec, list(contents.values()), {})
    shared = {mid: text_id for mid, text_id in zip(ids, text_ids, strict=True) if text_id is not None}
    conn.executemany("UPDATE messages SET content = '', text_id = ? WHERE message_id = ?",
                     [(text_id, mid) for mid, text_id in shared.items()])
    old = [(*r[:3], codec.decode(conn, r[9], r[3]), *r[4:7], codec.decode(conn, r[9], r[7]), r[8]) for r in
           conn.execute(f"SELECT {_OLD_PARTS} FROM message_parts_v4 WHERE message_id IN ({marks(ids)}) "
                        "ORDER BY message_id, ordinal", ids)]
    conn.executemany(f"INSERT INTO message_parts ({texts.PART_COLUMNS}) VALUES ({marks(range(14))})",
                     [texts.part_row(conn, codec, contents[r[0]], r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6]),
                                     r[7], r[8]) for r in old])
    if texts.contents(conn, ids) != contents:
        _failed()
    _move_payloads(conn, codec, contents, shared)
    rebuilt: list[tuple[Any, ...]] = []
    for r in conn.execute(f"SELECT {texts.PART_COLUMNS} FROM message_parts WHERE message_id IN ({marks(ids)}) "
                          "ORDER BY message_id, ordinal", ids).fetchall():
        text, raw = texts.rebuild_part(conn, codec, r, contents[r[0]])
        rebuilt.append((r[0], r[1], r[2], text, r[3], r[4], r[5], raw, r[6]))
    if rebuilt != old:
        _failed()


def _move_payloads(conn: sqlite3.Connection, codec: Codec, contents: dict[int, str], shared: dict[int, int]
                   ) -> None:
    """The native records of the batch's messages without their message's shared text, checked."""
    ids = list(shared)
    if not ids:
        return
    payloads = {r[0]: (r[1], codec.decode(conn, r[2], r[3])) for r in conn.execute(
        "SELECT transcript_id, message_id, payload_codec, payload FROM native_records WHERE message_id IN "
        f"({marks(ids)})", ids)}
    spans: dict[int, list[tuple[int, int]]] = {}
    for mid, start, length in conn.execute("SELECT message_id, text_start, text_length FROM message_parts "
                                           f"WHERE text_start IS NOT NULL AND message_id IN ({marks(ids)})", ids):
        spans.setdefault(mid, []).append((start, length))
    updates = []
    for tid, (mid, payload) in payloads.items():
        rest, text_columns = texts.payload_cut(payload, shared[mid], contents[mid], spans.get(mid, ()))
        name, (value,) = codec.encode_many(conn, (rest,), sample=True)
        updates.append((name, value, *text_columns, tid))
    conn.executemany("UPDATE native_records SET payload_codec = ?, payload = ?, payload_text_id = ?, "
                     "payload_text_at = ?, payload_text_quoted = ?, payload_text_start = ?, payload_text_length = ? "
                     "WHERE transcript_id = ?", updates)
    tids = list(payloads)
    for r in conn.execute("SELECT n.transcript_id, n.payload_codec, n.payload, NULL, n.payload_text_at, "
                          "n.payload_text_quoted, n.payload_text_start, n.payload_text_length, x.codec, x.data "
                          "FROM native_records n LEFT JOIN texts x "
                          f"ON x.text_id = n.payload_text_id WHERE n.transcript_id IN ({marks(tids)})", tids):
        if texts.rebuild_payload(conn, codec, *r[1:]) != payloads[r[0]][1]:
            _failed()


def _failed() -> None:
    raise StorageUnavailableError("migrating message text to schema version 5 failed its check; the database "
                                  "is unchanged", backend=BACKEND, domain="schema", code="migration_check")
