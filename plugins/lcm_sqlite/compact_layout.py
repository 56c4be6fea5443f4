"""Schema version 2: native records without repeated text, payloads compressed.

Version 1 stored each native record's client, format, session, source locator and
scrubber version as text in every row and in two of its indexes, and its ingest key
and content digest as 64 hex characters: about 400 bytes of metadata per record,
more than the compressed payload. Version 2 keeps those strings once in
``native_strings`` and refers to them by id, stores hex digests as their 32 bytes,
and names a codec per row for the payload (``codec.py``) and for message parts.

The migration copies every record into the new table inside the schema
transaction, checks that every row arrived unchanged before it drops the old
table, and leaves payloads plain (codec ``NULL``); ``lcm vacuum`` compresses them
later in short batches.
"""

from __future__ import annotations

import re
import sqlite3

from lcm_framework.plugin_api import StorageUnavailableError

from .errors import BACKEND

_HEX = re.compile(r"[0-9a-f]{64}")
SEPARATOR = "\x1f"
"""Joins client name, format name and format version into one interned string."""


def pack_digest(value: str) -> str | bytes:
    """A 64-hex-digit digest as its 32 bytes; any other key stays text (both round-trip exactly)."""
    return bytes.fromhex(value) if _HEX.fullmatch(value) else value


def unpack_digest(value: str | bytes) -> str:
    return value.hex() if isinstance(value, bytes) else value


TABLE = """
CREATE TABLE native_records_v2 (
  transcript_id INTEGER PRIMARY KEY,
  ingest_key BLOB NOT NULL UNIQUE,
  format_ref INTEGER NOT NULL REFERENCES native_strings(string_id),
  session_ref INTEGER NOT NULL REFERENCES native_strings(string_id),
  source_ref INTEGER NOT NULL REFERENCES native_strings(string_id),
  source_ordinal INTEGER NOT NULL,
  content_sha256 BLOB NOT NULL,
  scrubber_ref INTEGER NOT NULL REFERENCES native_strings(string_id),
  observed_at INTEGER NOT NULL,
  ingested_at INTEGER NOT NULL,
  message_id INTEGER REFERENCES messages(message_id) ON DELETE SET NULL,
  payload_codec TEXT,
  payload BLOB NOT NULL
)"""
FORMAT_KEY = "n.client_name || char(31) || n.format_name || char(31) || n.format_version"
_JOINS = ("JOIN native_strings f ON f.value = " + FORMAT_KEY + " "
          "JOIN native_strings s ON s.value = n.native_session_id "
          "JOIN native_strings l ON l.value = n.source_locator "
          "JOIN native_strings v ON v.value = n.scrubber_version")


def migrate(conn: sqlite3.Connection) -> None:
    """Version 1 to 2, inside the caller's transaction; raises before dropping anything if a row differs."""
    conn.create_function("lcm_pack_digest", 1, pack_digest, deterministic=True)
    conn.execute("CREATE TABLE native_strings (string_id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE)")
    for expression in (FORMAT_KEY, "n.native_session_id", "n.source_locator", "n.scrubber_version"):
        conn.execute(f"INSERT OR IGNORE INTO native_strings (value) SELECT DISTINCT {expression} "
                     "FROM native_records n")
    conn.execute(TABLE)
    copied = conn.execute(
        "INSERT INTO native_records_v2 SELECT n.transcript_id, lcm_pack_digest(n.ingest_key), f.string_id, "
        "s.string_id, l.string_id, n.source_ordinal, lcm_pack_digest(n.content_sha256), v.string_id, "
        f"n.observed_at, n.ingested_at, n.message_id, NULL, n.payload_json FROM native_records n {_JOINS}").rowcount
    total = conn.execute("SELECT count(*) FROM native_records").fetchone()[0]
    same = conn.execute(
        f"SELECT count(*) FROM native_records n {_JOINS} JOIN native_records_v2 m ON m.transcript_id = "
        "n.transcript_id AND m.format_ref = f.string_id AND m.session_ref = s.string_id "
        "AND m.source_ref = l.string_id AND m.scrubber_ref = v.string_id "
        "WHERE m.payload = n.payload_json AND m.ingest_key = lcm_pack_digest(n.ingest_key) "
        "AND m.content_sha256 = lcm_pack_digest(n.content_sha256) AND m.source_ordinal = n.source_ordinal "
        "AND m.observed_at = n.observed_at AND m.ingested_at = n.ingested_at "
        "AND m.message_id IS n.message_id").fetchone()[0]
    if not copied == total == same:
        raise StorageUnavailableError("migrating native records to schema version 2 failed its check; the "
                                      "database is unchanged", backend=BACKEND, domain="schema",
                                      code="migration_check")
    conn.execute("DROP TABLE native_records")
    conn.execute("ALTER TABLE native_records_v2 RENAME TO native_records")
    for name, columns in (("session", "session_ref, source_ordinal"), ("source", "source_ref, source_ordinal"),
                          ("message", "message_id")):
        conn.execute(f"CREATE INDEX native_records_{name} ON native_records({columns})")
    conn.execute("ALTER TABLE message_parts ADD COLUMN codec TEXT")
    conn.execute("CREATE TABLE codec_dictionaries (dict_id INTEGER PRIMARY KEY, codec TEXT NOT NULL, "
                 "dictionary BLOB NOT NULL)")


class StringTable:
    """``native_strings`` of one connection, cached both ways (rows are only ever added)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._values: dict[int, str] = {}

    def _reload(self, conn: sqlite3.Connection) -> None:
        for string_id, value in conn.execute("SELECT string_id, value FROM native_strings WHERE string_id > ?",
                                             (max(self._values, default=0),)):
            self._ids[value] = string_id
            self._values[string_id] = value

    def find(self, conn: sqlite3.Connection, value: str) -> int | None:
        """The id of ``value``, or None when no record uses it."""
        if value not in self._ids:
            self._reload(conn)
        return self._ids.get(value)

    def intern(self, conn: sqlite3.Connection, value: str) -> int:
        """The id of ``value``, added inside the caller's write transaction when new."""
        found = self.find(conn, value)
        if found is None:
            conn.execute("INSERT OR IGNORE INTO native_strings (value) VALUES (?)", (value,))
            self._reload(conn)
            found = self._ids[value]
        return found

    def value(self, conn: sqlite3.Connection, string_id: int) -> str:
        if string_id not in self._values:
            self._reload(conn)
        return self._values[string_id]
