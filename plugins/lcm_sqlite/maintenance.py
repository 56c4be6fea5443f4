"""Storage figures (``dbstat``) and online-safe maintenance of one project database.

``compact_storage`` trains the project's dictionary from stored payloads when it has none (and is large
enough to gain from one) or has grown enough since (``codec.py``), rewrites payloads stored plain, without
a dictionary or with the shipped one with the project's newest codec in batches of ``BATCH_ROWS`` rows
(each its own short write transaction, so hooks wait milliseconds, not minutes): native payloads and
message texts into blocks (``_repack_batch``, ``_repack_texts``), deleting the blocks left without rows;
then gives free pages back: ``PRAGMA incremental_vacuum`` in steps where the database allows it and has
``connection.PAGE_BYTES`` pages, else one ``VACUUM`` that also switches it to incremental auto-vacuum and,
when no other connection has it open, to that page size (that one blocks writers for its duration; hooks
fall back to the outbox meanwhile).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path

from lcm_framework.plugin_api.sqlite import enable_wal
from lcm_framework.plugin_api.storage import MaintenanceReport, StorageUsage

from . import blocks
from .codec import BLOCK, MIN_BYTES, RETRAIN_GROWTH, SAMPLE_BYTES, TEXT_REF, TRAIN_ROWS, VACUUM_TRAIN_BYTES
from .connection import PAGE_BYTES, Database
from .encodings import Prepared
from .statements import chunks, marks

BATCH_ROWS = 500
VACUUM_STEP_PAGES = 2048
WAL_BACK_S = 30.0
"""How long switching back to WAL after a resizing ``VACUUM`` waits for other openers."""
_STORED = (  # table, codec column, stored columns: what ``usage`` counts
    ("native_records", "payload_codec", ("payload",)),
    ("message_parts", "codec", ("text", "raw_json")),
    ("texts", "codec", ("data",)),
    ("blocks", "codec", ("data",)),
)
_STORED_BYTES = ("SELECT (SELECT coalesce(sum(length(payload)), 0) FROM native_records) + "
                 "(SELECT coalesce(sum(length(data)), 0) FROM blocks) + "
                 f"(SELECT coalesce(sum(length(data)), 0) FROM texts WHERE codec != '{BLOCK}')")
"""Compressed bytes of native payloads and texts, blocks included."""


def file_bytes(path: Path) -> int:
    """Bytes of a database file and its WAL."""
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += path.with_name(path.name + suffix).stat().st_size
        except OSError:
            pass
    return total


def usage(db: Database, path: Path, payloads: bool) -> StorageUsage:
    def read(conn: sqlite3.Connection) -> StorageUsage:
        objects = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"))
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * page_size
        plain = stored = 0
        for table, codec, columns in _STORED if payloads else ():
            for row in conn.execute(f"SELECT {codec}, {', '.join(columns)} FROM {table}"):
                for value in row[1:]:
                    if value is None:
                        continue
                    stored += len(value)
                    if table != "blocks":  # their rows count the plain bytes
                        plain += db.codec.plain_size(conn, row[0], value)
        messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        transcript = conn.execute("SELECT coalesce(sum(byte_offset), 0) FROM checkpoints").fetchone()[0]
        return StorageUsage(objects=objects, total_bytes=file_bytes(path), free_bytes=free, messages=messages,
                            payload_bytes=plain, stored_payload_bytes=stored, transcript_bytes=transcript)

    return db.run(read, "storage")


def compact(db: Database, path: Path, progress: Callable[[int], None] | None) -> MaintenanceReport:
    before = file_bytes(path)
    _train_from_stored(db)
    done = 0
    batches: list[Callable[[sqlite3.Connection, int], tuple[int, int | None]]] = [
        functools.partial(_repack_batch, db), functools.partial(_repack_texts, db),
        functools.partial(_rewrite_parts, db)]
    for batch in batches:
        after: int | None = -1
        while after is not None:
            with db.op("storage", write=True) as conn:
                rows, after = batch(conn, after)
            done += rows
            if progress is not None and rows:
                progress(done)
    with db.op("storage", write=True) as conn:
        blocks.forget_unreferenced(conn)
    detail = db.run(_reclaim, "storage")
    return MaintenanceReport(recompressed=done, bytes_before=before, bytes_after=file_bytes(path), detail=detail)


def _train_from_stored(db: Database) -> None:
    """A dictionary trained from rows drawn from the whole project, when it has none (hook ingests never
    train one) and stores ``VACUUM_TRAIN_BYTES`` of payloads, or has grown ``RETRAIN_GROWTH`` times since its
    newest one was trained."""
    with db.op("storage", write=True) as conn:
        records = conn.execute("SELECT count(*) FROM native_records").fetchone()[0]
        stored = conn.execute(_STORED_BYTES).fetchone()[0]
        newest = conn.execute("SELECT records FROM codec_dictionaries ORDER BY dict_id DESC LIMIT 1").fetchone()
        if newest is not None and (newest[0] or 0) * RETRAIN_GROWTH > records:
            return
        if newest is None and stored < VACUUM_TRAIN_BYTES:
            return  # the shipped dictionary serves it better than one of its own would
        wanted = TRAIN_ROWS
        samples: list[bytes] = []
        size = 0
        for table, key, columns, count in (("native_records", "transcript_id", "payload_codec, payload, payload_block",
                                            wanted), ("texts", "text_id", "codec, data, NULL", wanted // 4)):
            picked = [k for (k,) in conn.execute(f"SELECT {key} FROM {table} ORDER BY random() LIMIT ?", (count,))]
            for group in chunks(sorted(picked)):
                for name, value, block in conn.execute(f"SELECT {columns} FROM {table} WHERE {key} IN "
                                                       f"({marks(group)}) ORDER BY {key}", group):
                    if size < SAMPLE_BYTES:
                        samples.append(blocks.plain(conn, db.codec, name, value, block).encode("utf-8"))
                        size += len(samples[-1])
        db.codec.train(conn, samples, records=records, newer=newest is not None, stored=stored)


def _repack_batch(db: Database, conn: sqlite3.Connection, after: int) -> tuple[int, int | None]:
    """Store again, in blocks of the project's newest codec, up to ``BATCH_ROWS`` native records after
    transcript id ``after`` that are compressed alone or in a block of an older codec: ``(rows rewritten,
    the last id looked at, or None when there are no more)``."""
    codec = db.codec
    newest = codec.newest(conn)
    if newest is None:
        return 0, None
    rows = conn.execute(
        "SELECT transcript_id, payload_codec, payload, payload_block FROM native_records WHERE transcript_id > ? "
        "AND (payload_block IN (SELECT block_id FROM blocks WHERE codec != ?) OR payload_block IS NULL "
        f"AND (payload_codec IS NOT NULL OR length(payload) >= {MIN_BYTES})) ORDER BY transcript_id LIMIT ?",
        (after, newest, BATCH_ROWS)).fetchall()
    if not rows:
        return 0, None
    stored = blocks.store(conn, codec, [blocks.plain(conn, codec, *row[1:]) for row in rows], Prepared())
    changed = [(*new, row[0]) for row, new in zip(rows, stored, strict=True) if new[0] != row[1] or new[2] is not None]
    conn.executemany("UPDATE native_records SET payload_codec = ?, payload = ?, payload_block = ? "
                     "WHERE transcript_id = ?", changed)
    return len(changed), (rows[-1][0] if len(rows) == BATCH_ROWS else None)


def _repack_texts(db: Database, conn: sqlite3.Connection, after: int) -> tuple[int, int | None]:
    """Store again, in blocks of the project's newest codec, the texts among the ``BATCH_ROWS`` after text id
    ``after`` that are compressed alone or in a block of an older codec (as ``_repack_batch``)."""
    codec = db.codec
    newest = codec.newest(conn)
    if newest is None:
        return 0, None
    rows = conn.execute("SELECT text_id, codec, data FROM texts WHERE text_id > ? ORDER BY text_id LIMIT ?",
                        (after, BATCH_ROWS)).fetchall()
    if not rows:
        return 0, None
    held = {TEXT_REF.unpack(row[2])[0] for row in rows if row[1] == BLOCK}
    current = {block_id for group in chunks(sorted(held)) for (block_id,) in conn.execute(
        f"SELECT block_id FROM blocks WHERE codec = ? AND block_id IN ({marks(group)})", (newest, *group))}
    stale = [row for row in rows if row[1] != BLOCK or TEXT_REF.unpack(row[2])[0] not in current]
    stored = blocks.store(conn, codec, [str(codec.decode(conn, row[1], row[2])) for row in stale], Prepared())
    changed = [(*blocks.as_text(new), row[0]) for row, new in zip(stale, stored, strict=True)
               if new[0] != row[1] or new[2] is not None]
    conn.executemany("UPDATE texts SET codec = ?, data = ? WHERE text_id = ?", changed)
    return len(changed), (rows[-1][0] if len(rows) == BATCH_ROWS else None)


def _rewrite_parts(db: Database, conn: sqlite3.Connection, after: int) -> tuple[int, int | None]:
    """Rewrite the parts of up to ``BATCH_ROWS`` messages after ``after`` whose codec is not the newest."""
    newest = db.codec.newest(conn)
    if newest is None:
        return 0, None
    stale = "(codec IS NULL OR codec != ?)"
    keys = [k for (k,) in conn.execute(f"SELECT DISTINCT message_id FROM message_parts WHERE message_id > ? "
                                       f"AND {stale} ORDER BY message_id LIMIT ?", (after, newest, BATCH_ROWS))]
    if not keys:
        return 0, None
    rows = conn.execute(f"SELECT message_id, ordinal, codec, text, raw_json FROM message_parts "
                        f"WHERE message_id IN ({marks(keys)}) AND {stale}", (*keys, newest)).fetchall()
    rewritten = 0
    for message_id, ordinal, name, *values in rows:
        new_codec, stored = db.codec.encode_many(conn, [db.codec.decode(conn, name, v) for v in values])
        if new_codec is None:
            continue  # too short to compress: stays plain
        conn.execute("UPDATE message_parts SET codec = ?, text = ?, raw_json = ? WHERE message_id = ? AND ordinal = ?",
                     (new_codec, *stored, message_id, ordinal))
        rewritten += 1
    return rewritten, (keys[-1] if len(keys) == BATCH_ROWS else None)


def _reclaim(conn: sqlite3.Connection) -> str:
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    resized = page != PAGE_BYTES and _leave_wal(conn)
    if not resized and conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:  # incremental
        steps = 0
        while conn.execute("PRAGMA freelist_count").fetchone()[0] > 0:
            conn.execute(f"PRAGMA incremental_vacuum({VACUUM_STEP_PAGES})").fetchall()
            steps += 1
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return f"free pages given back in {steps} incremental step(s)"
    try:
        if resized:
            conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("VACUUM")
    finally:
        if resized:
            enable_wal(conn, WAL_BACK_S)
    if not resized:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    now = conn.execute("PRAGMA page_size").fetchall()[0][0]  # another opener may have switched WAL back on
    pages = f", {page}-byte pages made {now}" if now != page else ""
    return f"one full VACUUM{pages} (from now on free pages are given back incrementally)"


def _leave_wal(conn: sqlite3.Connection) -> bool:
    """Switch to a rollback journal for a ``VACUUM`` that changes the page size (a WAL database keeps its
    own); False when another connection has the database open (SQLite refuses the switch then)."""
    try:
        return [str(mode).lower() for (mode,) in conn.execute("PRAGMA journal_mode = DELETE")] == ["delete"]
    except sqlite3.OperationalError:
        return False
