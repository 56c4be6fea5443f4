"""Immutable client-native transcript records with message links and compare-and-swap checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from lcm_framework.plugin_api.formats import FormatIdentity
from lcm_framework.plugin_api.storage import (
    Checkpoint,
    NativeBatchResult,
    NativeRecord,
    NativeRecordInput,
    native_identity,
    same_but_unlinked,
)

from . import blocks, texts
from .clock import from_us, now_us, to_us
from .codec import MIN_BYTES
from .compact_layout import SEPARATOR, pack_digest, unpack_digest
from .scope import Repository
from .statements import chunks, insert_rows, marks

DERIVED = b""
"""``content_sha256`` of a record whose digest is the SHA-256 of its payload (what an import writes), computed
again when it is read: 33 bytes a record (on 5.8 MB of rewritten sessions, 2% of what the project stores).
Schema version 8 (older versions would read it as the digest itself)."""


def _sha256(payload: str) -> str:
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def _stored_sha256(record: NativeRecordInput) -> str | bytes:
    return DERIVED if record.content_sha256 == _sha256(record.payload_json) else pack_digest(record.content_sha256)


_COLUMNS = ("transcript_id, ingest_key, format_ref, session_ref, source_ref, source_ordinal, content_sha256, "
            "scrubber_ref, observed_at, ingested_at, message_id, payload_codec, payload, payload_block, "
            "payload_text_id, payload_text_at, payload_text_quoted, payload_text_start, payload_text_length")
_SELECT = (f"SELECT {_COLUMNS}, x.codec, x.data FROM native_records "
           "LEFT JOIN texts x ON x.text_id = payload_text_id")
_INSERT_COLUMNS = _COLUMNS.removeprefix("transcript_id, ")
_CHECKPOINT = ("source_key, revision, byte_offset, prefix_sha256, scrubber_version, last_source_ordinal, "
               "imported, skipped, quarantined, state_json")




_CHECKPOINT_FIELDS = tuple(f.name for f in dataclasses.fields(Checkpoint))


def _values(cp: Checkpoint) -> tuple[Any, ...]:
    """A checkpoint's values in column order (its fields are all scalars: no deep copy needed)."""
    return tuple(getattr(cp, name) for name in _CHECKPOINT_FIELDS)


def _progress(cp: Checkpoint) -> tuple[Any, ...]:
    """A checkpoint's values without its revision."""
    return _values(dataclasses.replace(cp, revision=0))


class SqliteNativeTranscripts(Repository):
    domain = "native_transcripts"

    def ingest_batch(self, records: Sequence[NativeRecordInput], *, source_key: str, expected: Checkpoint | None,
                     new_checkpoint: Checkpoint) -> NativeBatchResult:
        with self._op(write=True) as conn:
            current = self._load_checkpoint(conn, source_key)
            same_target = current is not None and _progress(current) == _progress(new_checkpoint)
            found = self._existing(conn, records)
            if current != expected and (not same_target or any(r.ingest_key not in found for r in records)):
                raise self._conflict("the checkpoint changed since it was read", "checkpoint_conflict")
            fresh: dict[str, NativeRecordInput] = {}
            for record in records:
                earlier = found.get(record.ingest_key) or fresh.get(record.ingest_key)
                if earlier is None:
                    fresh[record.ingest_key] = record
                elif native_identity(earlier) != native_identity(record) and not (
                        isinstance(earlier, NativeRecord) and same_but_unlinked(earlier, record)):
                    raise self._conflict("an ingest key was reused for different data", "ingest_key_conflict")
            self._insert(conn, fresh.values())
            inserted = len(fresh)
            skipped = len(records) - inserted
            if same_target:
                return NativeBatchResult(inserted, skipped, current)
            stored = dataclasses.replace(new_checkpoint, revision=1 if current is None else current.revision + 1)
            conn.execute(f"INSERT OR REPLACE INTO checkpoints ({_CHECKPOINT}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         _values(stored))
        return NativeBatchResult(inserted, skipped, stored)

    def _existing(self, conn: sqlite3.Connection, records: Sequence[NativeRecordInput]) -> dict[str, NativeRecord]:
        """The stored records among these ingest keys (one ``IN`` query per chunk), by key."""
        keys = sorted({pack_digest(r.ingest_key) for r in records}, key=repr)
        found: dict[str, NativeRecord] = {}
        for group in chunks(keys):
            for row in conn.execute(f"{_SELECT} WHERE ingest_key IN ({marks(group)})", group).fetchall():
                record = self._record(conn, row)
                found[record.ingest_key] = record
        return found

    def _record(self, conn: sqlite3.Connection, row: Sequence[Any]) -> NativeRecord:
        value = self._scope.db.strings.value
        client, name, version = value(conn, row[2]).split(SEPARATOR)
        payload = texts.rebuild_payload(conn, self._scope.db.codec, *row[11:14], *row[15:])
        return NativeRecord(
            transcript_id=row[0], ingest_key=unpack_digest(row[1]), format=FormatIdentity(client, name, version),
            native_session_id=value(conn, row[3]), source_locator=value(conn, row[4]), source_ordinal=row[5],
            payload_json=payload, content_sha256=_sha256(payload) if row[6] == DERIVED else unpack_digest(row[6]),
            scrubber_version=value(conn, row[7]),
            observed_at=from_us(row[8]), ingested_at=from_us(row[9]), message_id=row[10])

    def _insert(self, conn: sqlite3.Connection, records: Iterable[NativeRecordInput]) -> None:
        ingested = now_us()
        observed: dict[object, int] = {}  # a batch shares one observation time: convert it once
        db = self._scope.db
        intern = db.strings.intern
        records = list(records)
        linked = sorted({r.message_id for r in records if r.message_id is not None})
        shared: dict[int, int] = {}
        spans: dict[int, list[tuple[int, int]]] = {}
        for group in chunks(linked):
            shared.update(conn.execute(f"SELECT message_id, text_id FROM messages WHERE message_id IN "
                                       f"({marks(group)}) AND text_id IS NOT NULL", group))
            for mid, start, length in conn.execute(
                    f"SELECT message_id, text_start, text_length FROM message_parts WHERE message_id IN "
                    f"({marks(group)}) AND text_length >= {MIN_BYTES}", group):
                spans.setdefault(mid, []).append((start, length))
        heads, rests, cut_out = [], [], []
        for r in records:
            fmt = SEPARATOR.join((r.format.client_name, r.format.format_name, r.format.format_version))
            text_id = None if r.message_id is None else shared.get(r.message_id)
            text = None if text_id is None else texts.remembered(conn, db.codec, db.recent_texts, text_id)
            rest, text_columns = texts.payload_cut(r.payload_json, text_id, text, spans.get(r.message_id, ())
                                                   if r.message_id is not None else (), db.prepared)
            rests.append(rest)
            cut_out.append(text_columns)
            heads.append((pack_digest(r.ingest_key), intern(conn, fmt), intern(conn, r.native_session_id),
                          intern(conn, r.source_locator), r.source_ordinal, _stored_sha256(r),
                          intern(conn, r.scrubber_version),
                          observed.get(r.observed_at) or observed.setdefault(r.observed_at, to_us(r.observed_at)),
                          ingested, r.message_id))
        stored = blocks.store(conn, db.codec, rests, db.prepared)
        insert_rows(conn, f"native_records ({_INSERT_COLUMNS})",
                    [(*head, *columns, *text) for head, columns, text in zip(heads, stored, cut_out, strict=True)])
        if self._scope.db.codec.ready_to_train():
            self._scope.db.codec.train(conn)

    def _load_checkpoint(self, conn: sqlite3.Connection, source_key: str) -> Checkpoint | None:
        row = conn.execute(f"SELECT {_CHECKPOINT} FROM checkpoints WHERE source_key = ?", (source_key,)).fetchone()
        return None if row is None else Checkpoint(*row)

    def get_by_id(self, transcript_id: int) -> NativeRecord | None:
        rows = self._query("WHERE transcript_id = ?", transcript_id)
        return rows[0] if rows else None

    def list_by_native_session(self, native_session_id: str) -> list[NativeRecord]:
        return self._by_string("session_ref", native_session_id)

    def list_by_source(self, source_locator: str) -> list[NativeRecord]:
        return self._by_string("source_ref", source_locator)

    def list_by_message(self, message_id: int) -> list[NativeRecord]:
        return self._query("WHERE message_id = ? ORDER BY transcript_id", message_id)

    def get_checkpoint(self, source_key: str) -> Checkpoint | None:
        with self._op() as conn:
            return self._load_checkpoint(conn, source_key)

    def _by_string(self, column: str, value: str) -> list[NativeRecord]:
        with self._op() as conn:
            ref = self._scope.db.strings.find(conn, value)
            return [] if ref is None else self._rows(conn, f"WHERE {column} = ? ORDER BY source_ordinal, transcript_id",
                                                     ref)

    def _query(self, where: str, arg: object) -> list[NativeRecord]:
        with self._op() as conn:
            return self._rows(conn, where, arg)

    def _rows(self, conn: sqlite3.Connection, where: str, arg: object) -> list[NativeRecord]:
        return [self._record(conn, r) for r in conn.execute(f"{_SELECT} {where}", (arg,)).fetchall()]
