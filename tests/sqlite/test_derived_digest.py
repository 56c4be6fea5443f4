"""A native record whose ``content_sha256`` is its payload's SHA-256 stores none: it is computed on read."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from lcm_sqlite import native

from lcm_framework.storage.models import Checkpoint, FormatIdentity, NativeRecordInput

from .conftest import MakeFactory, db_path, ref

FMT = FormatIdentity("claude-code", "jsonl", "1")
NOW = datetime(2024, 4, 1, tzinfo=UTC)


def test_the_payloads_own_digest_is_not_stored_and_any_other_is(make_factory: MakeFactory, tmp_path: Path) -> None:
    payloads = [json.dumps({"n": n, "text": "é🚀 " * n}, ensure_ascii=False) for n in range(4)]
    digests = [hashlib.sha256(payloads[0].encode()).hexdigest(), hashlib.sha256(payloads[1].encode()).hexdigest(),
               "ab" * 32, "not-a-hex-digest"]  # the last two name other bytes: stored as given
    records = [NativeRecordInput(f"{n:064x}", FMT, "s", "a.jsonl", n, payloads[n], digests[n], "scrub-1", NOW)
               for n in range(4)]
    storage = make_factory().open_project(ref())
    storage.native_transcripts.ingest_batch(records, source_key="src", expected=None,
                                            new_checkpoint=Checkpoint("src", 0, 3, "cd" * 32, "scrub-1", 3, 4, 0, 0,
                                                                      "{}"))
    assert [r.content_sha256 for r in storage.native_transcripts.list_by_native_session("s")] == digests
    storage.close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        stored = [row[0] for row in raw.execute("SELECT content_sha256 FROM native_records ORDER BY source_ordinal")]
    finally:
        raw.close()
    assert stored == [native.DERIVED, native.DERIVED, bytes.fromhex("ab" * 32), "not-a-hex-digest"]
