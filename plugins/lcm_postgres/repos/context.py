"""Context items: the ordered list of messages and summaries the model sees per conversation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import ContextItem, ContextItemKind

from .base import Repository
from .conversations import lock_conversation

_TOKENS = "coalesce(m.token_count, s.token_count, 0)"
_JOINED = """
FROM context_items ci
LEFT JOIN messages m ON m.message_id = ci.message_id
LEFT JOIN summaries s ON s.project_id = ci.project_id AND s.summary_id = ci.summary_id
WHERE ci.project_id = %s AND ci.conversation_id = %s
"""


class PgContext(Repository):
    domain = "context"

    def list_items(self, conversation_id: int) -> list[ContextItem]:
        with self._cursor() as cur:
            cur.execute(f"SELECT ci.ordinal, ci.message_id, ci.summary_id, {_TOKENS} {_JOINED} ORDER BY ci.ordinal",
                        (self._project, conversation_id))
            rows = cur.fetchall()
        return [
            ContextItem(conversation_id, self._int(ordinal),
                        ContextItemKind.MESSAGE if mid is not None else ContextItemKind.SUMMARY,
                        None if mid is None else self._int(mid), sid, self._int(tokens))
            for ordinal, mid, sid, tokens in rows
        ]

    def _lock(self, cur: Any, conversation_id: int) -> None:
        lock_conversation(cur, self._project, conversation_id)
        cur.execute("SELECT 1 FROM conversations WHERE project_id = %s AND conversation_id = %s",
                    (self._project, conversation_id))
        if cur.fetchone() is None:
            raise self._not_found("conversation")

    def append_messages(self, conversation_id: int, message_ids: Sequence[int]) -> None:
        ids = list(message_ids)
        if not ids:
            return
        with self._cursor() as cur:
            self._lock(cur, conversation_id)
            cur.execute("SELECT count(*) FROM messages WHERE project_id = %s AND conversation_id = %s "
                        "AND message_id = ANY(%s)", (self._project, conversation_id, sorted(set(ids))))
            if cur.fetchone()[0] != len(set(ids)):
                raise self._not_found("a message of this conversation")
            cur.execute(
                "INSERT INTO context_items (project_id, conversation_id, ordinal, message_id) "
                "SELECT %s, %s, (SELECT coalesce(max(ordinal) + 1, 0) FROM context_items "
                "WHERE conversation_id = %s) + u.ord - 1, u.mid FROM unnest(%s::bigint[]) WITH ORDINALITY "
                "AS u(mid, ord)", (self._project, conversation_id, conversation_id, ids))

    def replace_range(self, conversation_id: int, start_ordinal: int, end_ordinal: int, summary_id: str) -> None:
        with self._cursor() as cur:
            self._lock(cur, conversation_id)
            cur.execute("SELECT conversation_id FROM summaries WHERE project_id = %s AND summary_id = %s",
                        (self._project, summary_id))
            owner = cur.fetchone()
            if owner is None or owner[0] != conversation_id:
                raise self._not_found("summary of this conversation")
            cur.execute("SELECT count(*) FROM context_items WHERE conversation_id = %s "
                        "AND ordinal BETWEEN %s AND %s", (conversation_id, start_ordinal, end_ordinal))
            if cur.fetchone()[0] != end_ordinal - start_ordinal + 1:
                raise self._not_found("context range")
            cur.execute("DELETE FROM context_items WHERE conversation_id = %s AND ordinal BETWEEN %s AND %s",
                        (conversation_id, start_ordinal, end_ordinal))
            cur.execute("UPDATE context_items SET ordinal = ordinal - %s WHERE conversation_id = %s "
                        "AND ordinal > %s", (end_ordinal - start_ordinal, conversation_id, end_ordinal))
            cur.execute("INSERT INTO context_items (project_id, conversation_id, ordinal, summary_id) "
                        "VALUES (%s, %s, %s, %s)", (self._project, conversation_id, start_ordinal, summary_id))

    def token_total(self, conversation_id: int) -> int:
        with self._cursor() as cur:
            cur.execute(f"SELECT coalesce(sum({_TOKENS}), 0) {_JOINED}", (self._project, conversation_id))
            return self._int(int(cur.fetchone()[0]))

    def depths(self, conversation_id: int) -> list[int]:
        with self._cursor() as cur:
            cur.execute("SELECT DISTINCT s.depth FROM context_items ci JOIN summaries s ON s.project_id = "
                        "ci.project_id AND s.summary_id = ci.summary_id WHERE ci.project_id = %s "
                        "AND ci.conversation_id = %s ORDER BY s.depth", (self._project, conversation_id))
            return [self._int(r[0]) for r in cur.fetchall()]
