"""Immutable client-native transcript records, exact message links and compare-and-swap checkpoints.

One batch = one transaction: the checkpoint row is locked (or, before the
first checkpoint, an advisory lock on the source key is taken), existing
ingest keys are compared, new records are inserted with a constant number of
bind parameters, and the checkpoint advances with ``revision + 1``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
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

from .base import Repository, utc, utc_required
from .locks import advisory_key

_COLUMNS = ("transcript_id, ingest_key, client_name, format_name, format_version, native_session_id, "
            "source_locator, source_ordinal, payload_json, content_sha256, scrubber_version, observed_at, "
            "ingested_at, message_id")
_SELECT = f"SELECT {_COLUMNS} FROM native_transcripts"
_CHECKPOINT = ("source_key, revision, byte_offset, prefix_sha256, scrubber_version, last_source_ordinal, "
               "imported, skipped, quarantined, state_json")


def _progress(cp: Checkpoint) -> tuple[Any, ...]:
    return dataclasses.astuple(dataclasses.replace(cp, revision=0))


class PgNativeTranscripts(Repository):
    domain = "native_transcripts"

    def _record(self, r: Sequence[Any]) -> NativeRecord:
        return NativeRecord(self._int(r[0]), r[1], FormatIdentity(r[2], r[3], r[4]), r[5], r[6], self._int(r[7]),
                            r[8], r[9], r[10], utc_required(r[11]), utc_required(r[12]),
                            None if r[13] is None else self._int(r[13]))

    def _checkpoint(self, r: Sequence[Any]) -> Checkpoint:
        return Checkpoint(r[0], self._int(r[1]), self._int(r[2]), r[3], r[4], self._int(r[5]), self._int(r[6]),
                          self._int(r[7]), self._int(r[8]), r[9])

    def ingest_batch(self, records: Sequence[NativeRecordInput], *, source_key: str, expected: Checkpoint | None,
                     new_checkpoint: Checkpoint) -> NativeBatchResult:
        with self._cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("source", self._project, source_key),))
            current = self._load_checkpoint(cur, source_key)
            existing = self._existing(cur, records)
            same_target = current is not None and _progress(current) == _progress(new_checkpoint)
            if current != expected and not (same_target and all(r.ingest_key in existing for r in records)):
                raise self._conflict("the checkpoint changed since it was read", "checkpoint_conflict")
            fresh: dict[str, NativeRecordInput] = {}
            skipped = 0
            for record in records:
                prior = existing.get(record.ingest_key)
                known = prior or fresh.get(record.ingest_key)
                if known is None:
                    fresh[record.ingest_key] = record
                elif native_identity(known) != native_identity(record) and not (
                        prior is not None and same_but_unlinked(prior, record)):
                    raise self._conflict("an ingest key was reused for different data", "ingest_key_conflict")
                else:
                    skipped += 1
            self._insert(cur, list(fresh.values()))
            if same_target:
                return NativeBatchResult(len(fresh), skipped, current)
            stored = dataclasses.replace(new_checkpoint, revision=1 if current is None else current.revision + 1)
            cur.execute(
                f"INSERT INTO ingest_checkpoints (project_id, {_CHECKPOINT}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (project_id, source_key) DO UPDATE SET "
                "revision = excluded.revision, byte_offset = excluded.byte_offset, "
                "prefix_sha256 = excluded.prefix_sha256, scrubber_version = excluded.scrubber_version, "
                "last_source_ordinal = excluded.last_source_ordinal, imported = excluded.imported, "
                "skipped = excluded.skipped, quarantined = excluded.quarantined, state_json = excluded.state_json, "
                "updated_at = clock_timestamp()",
                (self._project, *dataclasses.astuple(stored)),
            )
        return NativeBatchResult(len(fresh), skipped, stored)

    def _existing(self, cur: Any, records: Sequence[NativeRecordInput]) -> dict[str, NativeRecord]:
        if not records:
            return {}
        cur.execute(f"{_SELECT} WHERE project_id = %s AND ingest_key = ANY(%s)",
                    (self._project, [r.ingest_key for r in records]))
        return {rec.ingest_key: rec for rec in (self._record(r) for r in cur.fetchall())}

    def _insert(self, cur: Any, records: list[NativeRecordInput]) -> None:
        if not records:
            return
        linked = [r.message_id for r in records if r.message_id is not None]
        if linked:
            self._require_messages(cur, linked)
        cols = list(zip(*[
            (r.ingest_key, r.format.client_name, r.format.format_name, r.format.format_version, r.native_session_id,
             r.source_locator, r.source_ordinal, r.payload_json, r.content_sha256, r.scrubber_version,
             utc(r.observed_at), r.message_id)
            for r in records
        ], strict=True))
        cur.execute(
            "INSERT INTO native_transcripts (project_id, ingest_key, client_name, format_name, format_version, "
            "native_session_id, source_locator, source_ordinal, payload_json, content_sha256, scrubber_version, "
            "observed_at, ingested_at, message_id) "
            "SELECT %s, u.k, u.c, u.f, u.v, u.s, u.l, u.o, u.p, u.h, u.sv, u.obs, clock_timestamp(), u.m "
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::bigint[], "
            "%s::text[], %s::text[], %s::text[], %s::timestamptz[], %s::bigint[]) WITH ORDINALITY "
            "AS u(k, c, f, v, s, l, o, p, h, sv, obs, m, n) ORDER BY u.n",
            (self._project, *[list(c) for c in cols]),
        )

    def _require_messages(self, cur: Any, message_ids: list[int]) -> None:
        ids = sorted(set(message_ids))
        cur.execute("SELECT count(*) FROM messages WHERE project_id = %s AND message_id = ANY(%s)",
                    (self._project, ids))
        if cur.fetchone()[0] != len(ids):
            raise self._not_found("a linked message")

    def _load_checkpoint(self, cur: Any, source_key: str) -> Checkpoint | None:
        cur.execute(f"SELECT {_CHECKPOINT} FROM ingest_checkpoints WHERE project_id = %s AND source_key = %s",
                    (self._project, source_key))
        row = cur.fetchone()
        return None if row is None else self._checkpoint(row)

    def get_by_id(self, transcript_id: int) -> NativeRecord | None:
        rows = self._query("transcript_id = %s", transcript_id)
        return rows[0] if rows else None

    def list_by_native_session(self, native_session_id: str) -> list[NativeRecord]:
        return self._query("native_session_id = %s ORDER BY source_ordinal, transcript_id", native_session_id)

    def list_by_source(self, source_locator: str) -> list[NativeRecord]:
        return self._query("source_locator = %s ORDER BY source_ordinal, transcript_id", source_locator)

    def list_by_message(self, message_id: int) -> list[NativeRecord]:
        return self._query("message_id = %s ORDER BY transcript_id", message_id)

    def get_checkpoint(self, source_key: str) -> Checkpoint | None:
        with self._cursor() as cur:
            return self._load_checkpoint(cur, source_key)

    def _query(self, where: str, arg: object) -> list[NativeRecord]:
        with self._cursor() as cur:
            cur.execute(f"{_SELECT} WHERE project_id = %s AND {where}", (self._project, arg))
            return [self._record(r) for r in cur.fetchall()]
