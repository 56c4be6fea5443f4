"""Versioned schema: ``PRAGMA user_version`` counts the applied migrations.

Migrations run inside one ``BEGIN IMMEDIATE`` together with the full-text
index set-up, so two processes opening a new project at once are safe: the
second waits (busy timeout), then finds everything applied.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from lcm_framework.plugin_api import StorageUnavailableError
from lcm_framework.plugin_api.storage import FullTextTier, ProjectRef

from . import blocks, compact_layout, fts, single_copy
from .errors import BACKEND

V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE conversations (
  conversation_id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  title TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX conversations_session ON conversations(session_id, created_at, conversation_id);
CREATE INDEX conversations_created ON conversations(created_at, conversation_id);

CREATE TABLE messages (
  message_id INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id),
  seq INTEGER NOT NULL CHECK (seq >= 0),
  role TEXT NOT NULL,
  token_count INTEGER NOT NULL CHECK (token_count >= 0),
  created_at INTEGER NOT NULL,
  content TEXT NOT NULL,
  UNIQUE (conversation_id, seq)
);
CREATE INDEX messages_created ON messages(created_at);

CREATE TABLE message_parts (
  message_id INTEGER NOT NULL REFERENCES messages(message_id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  kind TEXT NOT NULL,
  text TEXT,
  tool_call_id TEXT,
  tool_name TEXT,
  is_error INTEGER NOT NULL DEFAULT 0,
  raw_json TEXT,
  metadata TEXT,
  PRIMARY KEY (message_id, ordinal)
) WITHOUT ROWID;

CREATE TABLE summaries (
  summary_id TEXT PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id),
  kind TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
  depth INTEGER NOT NULL CHECK (depth >= 0),
  token_count INTEGER NOT NULL CHECK (token_count >= 0),
  earliest_at INTEGER,
  latest_at INTEGER,
  descendant_count INTEGER NOT NULL CHECK (descendant_count >= 0),
  file_ids TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  content TEXT NOT NULL
);
CREATE INDEX summaries_conversation ON summaries(conversation_id, created_at, summary_id);

CREATE TABLE summary_messages (
  summary_id TEXT NOT NULL REFERENCES summaries(summary_id),
  ordinal INTEGER NOT NULL,
  message_id INTEGER NOT NULL REFERENCES messages(message_id),
  PRIMARY KEY (summary_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX summary_messages_message ON summary_messages(message_id);

CREATE TABLE summary_parents (
  summary_id TEXT NOT NULL REFERENCES summaries(summary_id),
  ordinal INTEGER NOT NULL,
  parent_id TEXT NOT NULL REFERENCES summaries(summary_id),
  PRIMARY KEY (summary_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX summary_parents_parent ON summary_parents(parent_id);

CREATE TABLE context_items (
  conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id),
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  message_id INTEGER REFERENCES messages(message_id),
  summary_id TEXT REFERENCES summaries(summary_id),
  CHECK ((message_id IS NULL) <> (summary_id IS NULL))
);
CREATE INDEX context_items_order ON context_items(conversation_id, ordinal);
CREATE INDEX context_items_message ON context_items(message_id);

CREATE TABLE large_files (
  file_id TEXT PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id),
  message_id INTEGER REFERENCES messages(message_id) ON DELETE SET NULL,
  file_name TEXT,
  mime_type TEXT,
  byte_size INTEGER NOT NULL,
  token_count INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  exploration_summary TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX large_files_conversation ON large_files(conversation_id, created_at, file_id);
CREATE INDEX large_files_message ON large_files(message_id);

CREATE TABLE memories (
  memory_id INTEGER PRIMARY KEY,
  tags TEXT NOT NULL DEFAULT '[]',
  confidence REAL NOT NULL,
  source_summary_id TEXT,
  metadata TEXT,
  archived INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  content TEXT NOT NULL
);

CREATE TABLE recall_stats (
  target_id TEXT PRIMARY KEY,
  surfaced INTEGER NOT NULL DEFAULT 0,
  useful INTEGER NOT NULL DEFAULT 0,
  not_useful INTEGER NOT NULL DEFAULT 0,
  last_surfaced_at INTEGER
) WITHOUT ROWID;

CREATE TABLE recall_surfacings (
  surfacing_id INTEGER PRIMARY KEY,
  target_id TEXT NOT NULL,
  query TEXT,
  surfaced_at INTEGER NOT NULL
);

CREATE TABLE redaction_counts (category TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID;

CREATE TABLE session_ingests (
  session_id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  completed_at INTEGER NOT NULL,
  message_count INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT,
  fence INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE native_records (
  transcript_id INTEGER PRIMARY KEY,
  ingest_key TEXT NOT NULL UNIQUE,
  client_name TEXT NOT NULL,
  format_name TEXT NOT NULL,
  format_version TEXT NOT NULL,
  native_session_id TEXT NOT NULL,
  source_locator TEXT NOT NULL,
  source_ordinal INTEGER NOT NULL,
  payload_json TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  scrubber_version TEXT NOT NULL,
  observed_at INTEGER NOT NULL,
  ingested_at INTEGER NOT NULL,
  message_id INTEGER REFERENCES messages(message_id) ON DELETE SET NULL
);
CREATE INDEX native_records_session ON native_records(native_session_id, source_ordinal);
CREATE INDEX native_records_source ON native_records(source_locator, source_ordinal);
CREATE INDEX native_records_message ON native_records(message_id);

CREATE TABLE checkpoints (
  source_key TEXT PRIMARY KEY,
  revision INTEGER NOT NULL,
  byte_offset INTEGER NOT NULL,
  prefix_sha256 TEXT NOT NULL,
  scrubber_version TEXT NOT NULL,
  last_source_ordinal INTEGER NOT NULL,
  imported INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  quarantined INTEGER NOT NULL,
  state_json TEXT NOT NULL
) WITHOUT ROWID;
"""

SUBAGENT_LINKS = """
CREATE TABLE subagent_links (
  child_conversation_id INTEGER PRIMARY KEY REFERENCES conversations(conversation_id) ON DELETE CASCADE,
  parent_session_id TEXT NOT NULL,
  agent_id TEXT,
  agent_type TEXT,
  prompt_sha256 TEXT,
  parent_conversation_id INTEGER REFERENCES conversations(conversation_id) ON DELETE SET NULL,
  parent_message_id INTEGER REFERENCES messages(message_id) ON DELETE SET NULL,
  tool_call_id TEXT
);
CREATE INDEX subagent_links_parent ON subagent_links(parent_session_id, child_conversation_id);
"""
"""Version 3: sub-agent runs, each child conversation's parent session and the tool call that started it."""

# Large text columns come last so reads of the small ones never walk overflow pages.
# Version 4: the FTS5 index stems (porter over unicode61); forgetting the recorded tier makes
# ``fts.install`` rebuild every index with the current definition.
FTS_STEMMING = """
DELETE FROM meta WHERE key = 'fts_tier';
"""
VECTORS = """
CREATE TABLE vector_space (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  embedder TEXT NOT NULL,
  dimensions INTEGER NOT NULL CHECK (dimensions >= 1)
);
CREATE TABLE message_vectors (
  row_id INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id INTEGER NOT NULL UNIQUE REFERENCES messages(message_id) ON DELETE CASCADE,
  vector BLOB NOT NULL
);
CREATE TABLE summary_vectors (
  row_id INTEGER PRIMARY KEY AUTOINCREMENT,
  summary_id TEXT NOT NULL UNIQUE REFERENCES summaries(summary_id) ON DELETE CASCADE,
  vector BLOB NOT NULL
);
"""
"""Version 6: the semantic lane's vectors (quantized bytes) per message and summary, and their embedder."""

CHECKPOINTS_ROWID = """
CREATE TABLE checkpoints_v8 (
  source_key TEXT NOT NULL UNIQUE,
  revision INTEGER NOT NULL,
  byte_offset INTEGER NOT NULL,
  prefix_sha256 TEXT NOT NULL,
  scrubber_version TEXT NOT NULL,
  last_source_ordinal INTEGER NOT NULL,
  imported INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  quarantined INTEGER NOT NULL,
  state_json TEXT NOT NULL
);
INSERT INTO checkpoints_v8 SELECT source_key, revision, byte_offset, prefix_sha256, scrubber_version,
  last_source_ordinal, imported, skipped, quarantined, state_json FROM checkpoints;
DROP TABLE checkpoints;
ALTER TABLE checkpoints_v8 RENAME TO checkpoints;
"""
"""Version 8 too: ``checkpoints`` becomes a rowid table. A WITHOUT ROWID row longer than about a quarter of
a page goes on in an overflow page, and a checkpoint (its resume state) is 500-700 bytes: on 2 KiB pages
30 checkpoints took 72 KB, 69% of it empty."""

# Version 5 (``single_copy``): message text in ``texts``, stored once; parts as spans of it.
# Version 7 (``blocks``): native payloads compressed in blocks of a batch's payloads; version 8: texts too,
# a native record's digest of its own payload is not stored (``native.DERIVED``), and ``CHECKPOINTS_ROWID``.
MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    V1, compact_layout.migrate, SUBAGENT_LINKS, FTS_STEMMING, single_copy.migrate, VECTORS, blocks.MIGRATION,
    f"{blocks.TEXTS_MIGRATION};\n{CHECKPOINTS_ROWID}")
LATEST = len(MIGRATIONS)


def statements(script: str) -> Iterator[str]:
    """Split a script into complete statements (triggers keep their inner semicolons)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


def _up_to_date(conn: sqlite3.Connection, tier: FullTextTier) -> bool:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version != LATEST:
        return False
    rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('fts_tier', 'fts_feed', 'root')").fetchall())
    return fts.current(rows, tier) and "root" in rows


def prepare(conn: sqlite3.Connection, project: ProjectRef, tier: FullTextTier) -> None:
    """Migrate to the latest schema, record the project and build the active tier's search index."""
    if _up_to_date(conn, tier):
        return
    if conn.execute("PRAGMA user_version").fetchone()[0] == 0:
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # takes effect only while the file has no table
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > LATEST:
            raise StorageUnavailableError("the database was written by a newer LCM", backend=BACKEND,
                                          domain="schema", project=project.project_id, code="schema_too_new")
        for step in MIGRATIONS[version:]:
            if callable(step):
                step(conn)
                continue
            for statement in statements(step):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {LATEST}")
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('project_id', ?), ('root', ?)",
                     (project.project_id, project.root))
        fts.install(conn, tier)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def read_project(conn: sqlite3.Connection) -> ProjectRef | None:
    """The ProjectRef stored in an existing database, or None when it has none."""
    rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('project_id', 'root')").fetchall())
    if "project_id" not in rows or "root" not in rows:
        return None
    return ProjectRef(project_id=rows["project_id"], root=rows["root"])
