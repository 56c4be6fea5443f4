"""Context items: the ordered list of messages and summaries the model sees per conversation."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from lcm_framework.plugin_api.storage import ContextItem, ContextItemKind

from .scope import Repository
from .statements import chunks, marks

_TOKENS = "coalesce(m.token_count, s.token_count, 0)"
_JOINED = """
FROM context_items ci
LEFT JOIN messages m ON m.message_id = ci.message_id
LEFT JOIN summaries s ON s.summary_id = ci.summary_id
WHERE ci.conversation_id = ?
"""


def renumber(conn: sqlite3.Connection, conversation_id: int) -> None:
    """Close gaps left by removed items so ordinals run 0..n-1 again."""
    rows = conn.execute("SELECT rowid, ordinal FROM context_items WHERE conversation_id = ? ORDER BY ordinal",
                        (conversation_id,)).fetchall()
    moves = [(new, rowid) for new, (rowid, old) in enumerate(rows) if new != old]
    if moves:
        conn.executemany("UPDATE context_items SET ordinal = ? WHERE rowid = ?", moves)


class SqliteContext(Repository):
    domain = "context"

    def list_items(self, conversation_id: int) -> list[ContextItem]:
        with self._op() as conn:
            rows = conn.execute(f"SELECT ci.ordinal, ci.message_id, ci.summary_id, {_TOKENS} {_JOINED} "
                                "ORDER BY ci.ordinal", (conversation_id,)).fetchall()
        return [
            ContextItem(conversation_id, ordinal, ContextItemKind.MESSAGE if mid is not None else
                        ContextItemKind.SUMMARY, mid, sid, tokens)
            for ordinal, mid, sid, tokens in rows
        ]

    def append_messages(self, conversation_id: int, message_ids: Sequence[int]) -> None:
        ids = list(message_ids)
        if not ids:
            return
        with self._op(write=True) as conn:
            if conn.execute("SELECT 1 FROM conversations WHERE conversation_id = ?",
                            (conversation_id,)).fetchone() is None:
                raise self._not_found("conversation")
            unique = sorted(set(ids))
            found = 0
            for group in chunks(unique):
                found += conn.execute(f"SELECT count(*) FROM messages WHERE conversation_id = ? "
                                      f"AND message_id IN ({marks(group)})", (conversation_id, *group)).fetchone()[0]
            if found != len(unique):
                raise self._not_found("a message of this conversation")
            last = conn.execute("SELECT max(ordinal) FROM context_items WHERE conversation_id = ?",
                                (conversation_id,)).fetchone()[0]
            start = 0 if last is None else last + 1
            conn.executemany("INSERT INTO context_items (conversation_id, ordinal, message_id) VALUES (?, ?, ?)",
                             [(conversation_id, start + i, mid) for i, mid in enumerate(ids)])

    def replace_range(self, conversation_id: int, start_ordinal: int, end_ordinal: int, summary_id: str) -> None:
        with self._op(write=True) as conn:
            owner = conn.execute("SELECT conversation_id FROM summaries WHERE summary_id = ?",
                                 (summary_id,)).fetchone()
            if owner is None or owner[0] != conversation_id:
                raise self._not_found("summary of this conversation")
            present = conn.execute("SELECT count(*) FROM context_items WHERE conversation_id = ? "
                                   "AND ordinal BETWEEN ? AND ?",
                                   (conversation_id, start_ordinal, end_ordinal)).fetchone()[0]
            if present != end_ordinal - start_ordinal + 1:
                raise self._not_found("context range")
            conn.execute("DELETE FROM context_items WHERE conversation_id = ? AND ordinal BETWEEN ? AND ?",
                         (conversation_id, start_ordinal, end_ordinal))
            conn.execute("UPDATE context_items SET ordinal = ordinal - ? WHERE conversation_id = ? AND ordinal > ?",
                         (end_ordinal - start_ordinal, conversation_id, end_ordinal))
            conn.execute("INSERT INTO context_items (conversation_id, ordinal, summary_id) VALUES (?, ?, ?)",
                         (conversation_id, start_ordinal, summary_id))

    def token_total(self, conversation_id: int) -> int:
        with self._op() as conn:
            row = conn.execute(f"SELECT coalesce(sum({_TOKENS}), 0) {_JOINED}", (conversation_id,)).fetchone()
        return int(row[0])

    def depths(self, conversation_id: int) -> list[int]:
        with self._op() as conn:
            rows = conn.execute("SELECT DISTINCT s.depth FROM context_items ci JOIN summaries s "
                                "ON s.summary_id = ci.summary_id WHERE ci.conversation_id = ? ORDER BY s.depth",
                                (conversation_id,)).fetchall()
        return [r[0] for r in rows]
