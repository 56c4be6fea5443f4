"""Full-text tiers: FTS5 (bm25, Porter stemming over unicode61), FTS4 (sqlite-fts4 ``rank_bm25``) or a LIKE scan.

Each searchable table has an external-content index ``<table>_fts`` kept in
sync by triggers; it reads the text from the table, or for messages from the
view ``message_texts`` (their text is stored compressed, ``texts.py``). New
messages are the exception: the adapter that inserts them hands their plain
text to the index itself (``index_messages``), so nothing decompresses what it
has just compressed; their delete trigger and a rebuild still read the view.
The tier built into a database is recorded in ``meta`` (and ``fts_feed``: which
indexes the adapter feeds); opening it with another active tier drops the old
index and rebuilds, and a database whose messages index still had its insert
trigger only loses that trigger.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lcm_framework.plugin_api import ConfigError
from lcm_framework.plugin_api.storage import FullTextTier

from .statements import insert_rows


@dataclass(frozen=True, slots=True)
class Source:
    """A searchable table: its name, the column holding its rowid and the table or view with its text;
    ``fed``: the adapter inserts new rows into the index (no insert trigger)."""

    table: str
    rowid: str
    view: str = ""
    fed: bool = False

    @property
    def content(self) -> str:
        return self.view or self.table

    @property
    def index(self) -> str:
        return f"{self.table}_fts"


SOURCES = (Source("messages", "message_id", "message_texts", fed=True), Source("summaries", "rowid"),
           Source("memories", "memory_id"))
FEED = ",".join(src.table for src in SOURCES if src.fed)
"""What ``meta.fts_feed`` records once the insert triggers of the fed indexes are gone."""
TIERS = (FullTextTier.FTS5, FullTextTier.FTS4, FullTextTier.LIKE)


@functools.cache
def available() -> frozenset[FullTextTier]:
    """Tiers this SQLite build supports (probed once on an in-memory database)."""
    found = {FullTextTier.LIKE}
    conn = sqlite3.connect(":memory:")
    try:
        for tier in (FullTextTier.FTS5, FullTextTier.FTS4):
            try:
                conn.execute(f"CREATE VIRTUAL TABLE probe_{tier.value} USING {tier.value}(a)")
                found.add(tier)
            except sqlite3.Error:
                pass
    finally:
        conn.close()
    return frozenset(found)


def resolve(setting: str) -> FullTextTier:
    """The tier for ``storage.fts_tier`` (auto: the best available); a forced unavailable tier is refused."""
    have = available()
    if setting == "auto":
        return next(tier for tier in TIERS if tier in have)
    tier = FullTextTier(setting)
    if tier not in have:
        raise ConfigError(f"storage.fts_tier={setting} is not supported by this SQLite build "
                          f"(available: {', '.join(t.value for t in TIERS if t in have)})")
    return tier


def _ddl(tier: FullTextTier, src: Source) -> list[str]:
    idx, table, rowid, content = src.index, src.table, src.rowid, src.content
    row = f"FROM {content} WHERE {rowid} = "
    if tier is FullTextTier.FTS5:
        create = (f"CREATE VIRTUAL TABLE {idx} USING fts5(content, content='{content}', "
                  f"content_rowid='{rowid}', tokenize='porter unicode61')")
        delete = f"INSERT INTO {idx}({idx}, rowid, content) SELECT 'delete', {rowid}, content {row}old.{rowid};"
        insert = f"INSERT INTO {idx}(rowid, content) SELECT {rowid}, content {row}new.{rowid};"
    else:
        create = f"CREATE VIRTUAL TABLE {idx} USING fts4(content, content='{content}', tokenize=unicode61)"
        delete = f"DELETE FROM {idx} WHERE docid = old.{rowid};"
        insert = f"INSERT INTO {idx}(docid, content) SELECT {rowid}, content {row}new.{rowid};"
    return [
        create,
        *([] if src.fed else [f"CREATE TRIGGER {idx}_ai AFTER INSERT ON {table} BEGIN {insert} END"]),
        f"CREATE TRIGGER {idx}_bd BEFORE DELETE ON {table} BEGIN {delete} END",
        f"INSERT INTO {idx}({idx}) VALUES ('rebuild')",
    ]


def current(meta: Mapping[str, str], tier: FullTextTier) -> bool:
    """Whether a database whose ``meta`` rows (``fts_tier``, ``fts_feed``) these are has ``tier``'s indexes as
    ``install`` builds them."""
    return meta.get("fts_tier") == tier.value and meta.get("fts_feed") == FEED


def install(conn: sqlite3.Connection, tier: FullTextTier) -> None:
    """Make ``tier`` the database's index (inside the caller's write transaction)."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('fts_tier', 'fts_feed')").fetchall())
    if current(meta, tier):
        return
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_feed', ?)", (FEED,))
    if meta.get("fts_tier") == tier.value:  # the same index, still fed by triggers: only they go
        for src in SOURCES:
            if src.fed:
                conn.execute(f"DROP TRIGGER IF EXISTS {src.index}_ai")
        return
    for src in SOURCES:
        conn.execute(f"DROP TRIGGER IF EXISTS {src.index}_ai")
        conn.execute(f"DROP TRIGGER IF EXISTS {src.index}_bd")
        conn.execute(f"DROP TABLE IF EXISTS {src.index}")
        if tier is not FullTextTier.LIKE:
            for statement in _ddl(tier, src):
                conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_tier', ?)", (tier.value,))


def index_messages(conn: sqlite3.Connection, tier: FullTextTier, rows: Sequence[tuple[int, str]]) -> None:
    """Add new messages ``(message_id, plain text)`` to the messages index (one statement: one segment)."""
    if tier is FullTextTier.FTS5:
        insert_rows(conn, "messages_fts(rowid, content)", rows)
    elif tier is FullTextTier.FTS4:
        insert_rows(conn, "messages_fts(docid, content)", rows)


def register_functions(conn: sqlite3.Connection, tier: FullTextTier) -> None:
    """Register ``rank_bm25`` (FTS4 ranking) on a connection that will query an FTS4 index."""
    if tier is FullTextTier.FTS4:
        from sqlite_fts4 import register_functions as register_fts4

        register_fts4(conn)


def _phrase(words: list[str]) -> str:
    return '"' + " ".join(words) + '"'


def match_expression(groups: list[list[str]]) -> str:
    """An FTS MATCH string that cannot be a syntax error: quoted word-only phrases, implicitly ANDed."""
    return " ".join(_phrase(words) for words in groups)


def any_of(groups: list[list[str]]) -> str:
    """The same phrases ORed: a row matching any of them."""
    return " OR ".join(_phrase(words) for words in groups)


def like_pattern(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
