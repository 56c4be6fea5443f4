"""Conversations, messages and message parts.

Batch writes pass whole columns as arrays through ``unnest`` so every
statement has a constant number of bind parameters. Get-or-create takes a
transaction advisory lock on (project, session) so concurrent callers
converge; append locks the conversation row so sequences stay contiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.formats import NewMessage, PartKind, Role
from lcm_framework.plugin_api.storage import Conversation, DeleteResult, Message, MessagePart, effective_limit

from .base import utc, utc_required
from .locks import advisory_key, lock_conversation
from .subagent_links import PgSubagentLinks

_CONVERSATION = "SELECT conversation_id, session_id, title, created_at FROM conversations"
_MESSAGE_COLUMNS = "message_id, conversation_id, seq, role, content, token_count, created_at"
_MESSAGE = f"SELECT {_MESSAGE_COLUMNS} FROM messages"
_PART_COLUMNS = "part_id, message_id, ordinal, kind, text, tool_call_id, tool_name, is_error, raw_json, metadata"


def part_id(message_id: int, ordinal: int) -> str:
    return f"part_{message_id}_{ordinal}"


class PgConversations(PgSubagentLinks):
    """Conversations, messages and message parts (the sub-agent links come from ``PgSubagentLinks``)."""

    domain = "conversations"

    def _conversation(self, row: Sequence[Any]) -> Conversation:
        return Conversation(self._int(row[0]), row[1], row[2], utc_required(row[3]))

    def _message(self, row: Sequence[Any]) -> Message:
        return Message(self._int(row[0]), self._int(row[1]), self._int(row[2]), Role(row[3]), row[4],
                       self._int(row[5]), utc_required(row[6]))

    # --- conversations ---------------------------------------------------

    def create_conversation(self, session_id: str, *, title: str | None = None) -> Conversation:
        with self._cursor() as cur:
            return self._insert_conversation(cur, session_id, title)

    def get_or_create_conversation(self, session_id: str, *, title: str | None = None) -> Conversation:
        with self._cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)",
                        (advisory_key("session", self._project.lower(), session_id),))
            cur.execute(f"{_CONVERSATION} WHERE project_id = %s AND session_id = %s "
                        "ORDER BY created_at DESC, conversation_id DESC LIMIT 1", (self._project, session_id))
            row = cur.fetchone()
            return self._conversation(row) if row else self._insert_conversation(cur, session_id, title)

    def get_conversation(self, conversation_id: int) -> Conversation | None:
        with self._cursor() as cur:
            cur.execute(f"{_CONVERSATION} WHERE project_id = %s AND conversation_id = %s",
                        (self._project, conversation_id))
            row = cur.fetchone()
        return self._conversation(row) if row else None

    def find_conversations(self, session_id: str) -> list[Conversation]:
        with self._cursor() as cur:
            cur.execute(f"{_CONVERSATION} WHERE project_id = %s AND session_id = %s "
                        "ORDER BY created_at, conversation_id", (self._project, session_id))
            return [self._conversation(r) for r in cur.fetchall()]

    def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        bound = effective_limit(limit)
        with self._cursor() as cur:
            cur.execute(f"{_CONVERSATION} WHERE project_id = %s ORDER BY created_at, conversation_id LIMIT %s",
                        (self._project, bound))
            return [self._conversation(r) for r in cur.fetchall()]

    def _insert_conversation(self, cur: Any, session_id: str, title: str | None) -> Conversation:
        cur.execute("INSERT INTO conversations (project_id, session_id, title) VALUES (%s, %s, %s) "
                    "RETURNING conversation_id, session_id, title, created_at", (self._project, session_id, title))
        return self._conversation(cur.fetchone())

    # --- messages --------------------------------------------------------

    def append_messages(self, conversation_id: int, messages: Sequence[NewMessage]) -> list[Message]:
        if not messages:
            return []
        with self._cursor() as cur:
            self._lock_conversation(cur, conversation_id)
            cur.execute("SELECT coalesce(max(seq) + 1, 0) FROM messages WHERE conversation_id = %s",
                        (conversation_id,))
            start = self._int(cur.fetchone()[0])
            return self._store(cur, conversation_id, messages, list(range(start, start + len(messages))))

    def insert_messages(self, conversation_id: int, messages: Sequence[NewMessage]) -> list[Message]:
        seqs = [m.seq for m in messages if m.seq is not None]  # the core checked that every message has one
        if not messages:
            return []
        with self._cursor() as cur:
            self._lock_conversation(cur, conversation_id)
            cur.execute("SELECT count(*) FROM messages WHERE conversation_id = %s AND seq = ANY(%s)",
                        (conversation_id, seqs))
            if cur.fetchone()[0]:
                raise self._conflict("a message with this seq already exists", "duplicate")
            return self._store(cur, conversation_id, messages, seqs)


    def _store(self, cur: Any, conversation_id: int, messages: Sequence[NewMessage],
               seqs: list[int]) -> list[Message]:
        cur.execute(
            f"INSERT INTO messages (project_id, conversation_id, seq, role, content, token_count, created_at) "
            f"SELECT %s, %s, u.seq, u.role, u.content, u.tokens, coalesce(u.created, statement_timestamp()) "
            f"FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::timestamptz[]) "
            f"AS u(seq, role, content, tokens, created) RETURNING {_MESSAGE_COLUMNS}",
            (self._project, conversation_id, seqs, [Role(m.role).value for m in messages],
             [m.content for m in messages], [m.token_count for m in messages],
             [utc(m.created_at) for m in messages]),
        )
        stored = {msg.seq: msg for msg in (self._message(r) for r in cur.fetchall())}
        ordered = [stored[s] for s in seqs]
        parts = [(msg.message_id, ordinal, p) for msg, m in zip(ordered, messages, strict=True)
                 for ordinal, p in enumerate(m.parts)]
        if parts:
            cur.execute(
                f"INSERT INTO message_parts (project_id, {_PART_COLUMNS}) SELECT %s, u.* FROM unnest("
                "%s::text[], %s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], "
                "%s::boolean[], %s::text[], %s::text[]) AS u",
                (self._project, [part_id(mid, o) for mid, o, _ in parts], [mid for mid, _, _ in parts],
                 [o for _, o, _ in parts], [PartKind(p.kind).value for _, _, p in parts],
                 [p.text for _, _, p in parts], [p.tool_call_id for _, _, p in parts],
                 [p.tool_name for _, _, p in parts], [bool(p.is_error) for _, _, p in parts],
                 [p.raw_json for _, _, p in parts], [p.metadata for _, _, p in parts]),
            )
        return ordered

    def list_messages(self, conversation_id: int, *, after_seq: int | None = None,
                      limit: int | None = None) -> list[Message]:
        bound = effective_limit(limit)
        with self._cursor() as cur:
            cur.execute(f"{_MESSAGE} WHERE project_id = %s AND conversation_id = %s AND seq > %s "
                        "ORDER BY seq LIMIT %s",
                        (self._project, conversation_id, -1 if after_seq is None else after_seq, bound))
            return [self._message(r) for r in cur.fetchall()]

    def get_messages(self, message_ids: Sequence[int]) -> list[Message]:
        ids = list(message_ids)
        if not ids:
            return []
        with self._cursor() as cur:
            cur.execute(f"{_MESSAGE} WHERE project_id = %s AND message_id = ANY(%s)", (self._project, ids))
            found = {m.message_id: m for m in (self._message(r) for r in cur.fetchall())}
        return [found[i] for i in ids if i in found]

    def find_message_by_content(self, conversation_id: int, role: str, content: str) -> list[Message]:
        with self._cursor() as cur:
            cur.execute(f"{_MESSAGE} WHERE project_id = %s AND conversation_id = %s AND role = %s "
                        "AND content = %s ORDER BY seq",
                        (self._project, conversation_id, str(getattr(role, "value", role)), content))
            return [self._message(r) for r in cur.fetchall()]

    def list_parts(self, message_ids: Sequence[int]) -> dict[int, list[MessagePart]]:
        ids = list(message_ids)
        out: dict[int, list[MessagePart]] = {}
        if not ids:
            return out
        with self._cursor() as cur:
            cur.execute(f"SELECT {_PART_COLUMNS} FROM message_parts WHERE project_id = %s "
                        "AND message_id = ANY(%s) ORDER BY message_id, ordinal", (self._project, ids))
            for r in cur.fetchall():
                mid = self._int(r[1])
                out.setdefault(mid, []).append(
                    MessagePart(r[0], mid, self._int(r[2]), PartKind(r[3]), r[4], r[5], r[6], bool(r[7]),
                                r[8], r[9]))
        return out

    def message_count(self, conversation_id: int) -> int:
        with self._cursor() as cur:
            cur.execute("SELECT count(*) FROM messages WHERE project_id = %s AND conversation_id = %s",
                        (self._project, conversation_id))
            return self._int(cur.fetchone()[0])

    def delete_messages(self, message_ids: Sequence[int]) -> DeleteResult:
        ids = list(dict.fromkeys(message_ids))
        if not ids:
            return DeleteResult((), ())
        with self._cursor() as cur:
            cur.execute(
                "SELECT m.message_id, m.conversation_id, EXISTS (SELECT 1 FROM summary_messages sm "
                "WHERE sm.message_id = m.message_id) FROM messages m "
                "WHERE m.project_id = %s AND m.message_id = ANY(%s)",
                (self._project, ids),
            )
            rows = {self._int(r[0]): (self._int(r[1]), bool(r[2])) for r in cur.fetchall()}
            for conversation_id in sorted({c for c, _ in rows.values()}):
                lock_conversation(cur, self._project, conversation_id)
            deleted = [i for i in ids if i in rows and not rows[i][1]]
            skipped = [i for i in ids if i in rows and rows[i][1]]
            if deleted:
                cur.execute("DELETE FROM context_items WHERE project_id = %s AND message_id = ANY(%s)",
                            (self._project, deleted))
                cur.execute("DELETE FROM messages WHERE project_id = %s AND message_id = ANY(%s)",
                            (self._project, deleted))
                renumber(cur, self._project, sorted({rows[i][0] for i in deleted}))
        return DeleteResult(tuple(deleted), tuple(skipped))


def renumber(cur: Any, project_id: str, conversation_ids: list[int]) -> None:
    """Close ordinal gaps so each conversation's context runs 0..n-1 again."""
    cur.execute(
        "UPDATE context_items c SET ordinal = r.new_ordinal FROM ("
        " SELECT conversation_id, ordinal, row_number() OVER (PARTITION BY conversation_id ORDER BY ordinal) - 1 "
        " AS new_ordinal FROM context_items WHERE project_id = %s AND conversation_id = ANY(%s)) r "
        "WHERE c.conversation_id = r.conversation_id AND c.ordinal = r.ordinal AND c.ordinal <> r.new_ordinal",
        (project_id, conversation_ids),
    )
