"""Conversations, messages and message parts."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.formats import NewMessage, PartKind, Role
from lcm_framework.plugin_api.storage import Conversation, DeleteResult, Message, MessagePart, effective_limit

from . import fts, texts
from .clock import from_us, now_us, to_us
from .context import renumber
from .statements import chunks, insert_rows, marks
from .subagent_links import SqliteSubagentLinks

_CONVERSATION = "SELECT conversation_id, session_id, title, created_at FROM conversations"
_MESSAGE = "SELECT message_id, conversation_id, seq, role, content, token_count, created_at FROM message_texts"


def _conversation(row: Sequence[Any]) -> Conversation:
    return Conversation(conversation_id=row[0], session_id=row[1], title=row[2], created_at=from_us(row[3]))


def message_from_row(row: Sequence[Any]) -> Message:
    return Message(message_id=row[0], conversation_id=row[1], seq=row[2], role=Role(row[3]), content=row[4],
                   token_count=row[5], created_at=from_us(row[6]))


def part_id(message_id: int, ordinal: int) -> str:
    return f"part_{message_id}_{ordinal}"


class SqliteConversations(SqliteSubagentLinks):
    """Conversations, their messages and message parts (sub-agent links: ``SqliteSubagentLinks``)."""

    domain = "conversations"

    # --- conversations ---------------------------------------------------

    def create_conversation(self, session_id: str, *, title: str | None = None) -> Conversation:
        with self._op(write=True) as conn:
            return self._insert_conversation(conn, session_id, title)

    def get_or_create_conversation(self, session_id: str, *, title: str | None = None) -> Conversation:
        with self._op(write=True) as conn:
            row = conn.execute(
                f"{_CONVERSATION} WHERE session_id = ? ORDER BY created_at DESC, conversation_id DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            return _conversation(row) if row else self._insert_conversation(conn, session_id, title)

    def get_conversation(self, conversation_id: int) -> Conversation | None:
        with self._op() as conn:
            row = conn.execute(f"{_CONVERSATION} WHERE conversation_id = ?", (conversation_id,)).fetchone()
        return _conversation(row) if row else None

    def find_conversations(self, session_id: str) -> list[Conversation]:
        with self._op() as conn:
            rows = conn.execute(f"{_CONVERSATION} WHERE session_id = ? ORDER BY created_at, conversation_id",
                                (session_id,)).fetchall()
        return [_conversation(r) for r in rows]

    def list_conversations(self, *, limit: int | None = None) -> list[Conversation]:
        bound = effective_limit(limit)
        if bound == 0:
            return []
        with self._op() as conn:
            rows = conn.execute(f"{_CONVERSATION} ORDER BY created_at, conversation_id LIMIT ?",
                                (-1 if bound is None else bound,)).fetchall()
        return [_conversation(r) for r in rows]

    def _insert_conversation(self, conn: sqlite3.Connection, session_id: str, title: str | None) -> Conversation:
        created = now_us()
        cur = conn.execute("INSERT INTO conversations (session_id, title, created_at) VALUES (?, ?, ?)",
                           (session_id, title, created))
        assert cur.lastrowid is not None
        return Conversation(cur.lastrowid, session_id, title, from_us(created))

    # --- messages --------------------------------------------------------

    def append_messages(self, conversation_id: int, messages: Sequence[NewMessage]) -> list[Message]:
        rows = self._rows(messages)
        if not rows:
            return []
        with self._op(write=True) as conn:
            self._require_conversation(conn, conversation_id)
            last = conn.execute("SELECT max(seq) FROM messages WHERE conversation_id = ?",
                                (conversation_id,)).fetchone()[0]
            start = 0 if last is None else last + 1
            seqs = list(range(start, start + len(rows)))
            return self._store(conn, conversation_id, messages, rows, seqs)

    def insert_messages(self, conversation_id: int, messages: Sequence[NewMessage]) -> list[Message]:
        seqs = [m.seq for m in messages if m.seq is not None]  # the core checked that every message has one
        rows = self._rows(messages)
        if not rows:
            return []
        with self._op(write=True) as conn:
            self._require_conversation(conn, conversation_id)
            return self._store(conn, conversation_id, messages, rows, seqs)

    @staticmethod
    def _rows(messages: Sequence[NewMessage]) -> list[tuple[str, str, int, int | None]]:
        """Row values of already validated messages."""
        return [(Role(m.role).value, m.content, m.token_count, None if m.created_at is None else to_us(m.created_at))
                for m in messages]

    def _store(self, conn: sqlite3.Connection, conversation_id: int, messages: Sequence[NewMessage],
               rows: list[tuple[str, str, int, int | None]], seqs: list[int]) -> list[Message]:
        default_created = now_us()
        db = self._scope.db
        codec, prepared = db.codec, db.prepared
        text_ids = texts.store(conn, codec, [content for _role, content, _tokens, _created in rows],
                               db.recent_texts, prepared)
        insert_rows(conn, "messages (conversation_id, seq, role, content, token_count, created_at, text_id)",
                    [(conversation_id, seq, role, "" if text_id is not None else content, tokens,
                      default_created if created is None else created, text_id)
                     for seq, (role, content, tokens, created), text_id in zip(seqs, rows, text_ids, strict=True)])
        ids = self._ids_by_seq(conn, conversation_id, seqs)
        fts.index_messages(conn, self._scope.tier, [(ids[seq], content) for seq, (_role, content, _tokens, _created)
                                                    in zip(seqs, rows, strict=True)])
        default_at = from_us(default_created)
        parts = [texts.part_row(conn, codec, message.content, ids[seq], ordinal, PartKind(p.kind).value, p.text,
                                p.tool_call_id, p.tool_name, bool(p.is_error), p.raw_json, p.metadata, prepared)
                 for seq, message in zip(seqs, messages, strict=True) for ordinal, p in enumerate(message.parts)]
        if parts:
            conn.executemany(f"INSERT INTO message_parts ({texts.PART_COLUMNS}) VALUES ({marks(parts[0])})", parts)
        return [
            Message(ids[seq], conversation_id, seq, Role(role), content, tokens,
                    default_at if created is None else from_us(created))
            for seq, (role, content, tokens, created) in zip(seqs, rows, strict=True)
        ]

    def _ids_by_seq(self, conn: sqlite3.Connection, conversation_id: int, seqs: list[int]) -> dict[int, int]:
        low, high = min(seqs), max(seqs)
        if high - low + 1 == len(seqs):
            found = conn.execute("SELECT seq, message_id FROM messages WHERE conversation_id = ? "
                                 "AND seq BETWEEN ? AND ?", (conversation_id, low, high)).fetchall()
            return dict(found)
        ids: dict[int, int] = {}
        for group in chunks(seqs):
            ids.update(conn.execute(f"SELECT seq, message_id FROM messages WHERE conversation_id = ? "
                                    f"AND seq IN ({marks(group)})", (conversation_id, *group)).fetchall())
        return ids

    def list_messages(self, conversation_id: int, *, after_seq: int | None = None,
                      limit: int | None = None) -> list[Message]:
        bound = effective_limit(limit)
        if bound == 0:
            return []
        with self._op() as conn:
            rows = conn.execute(f"{_MESSAGE} WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                                (conversation_id, -1 if after_seq is None else after_seq,
                                 -1 if bound is None else bound)).fetchall()
        return [message_from_row(r) for r in rows]

    def get_messages(self, message_ids: Sequence[int]) -> list[Message]:
        ids = list(message_ids)
        found: dict[int, Message] = {}
        with self._op() as conn:
            for group in chunks(sorted(set(ids))):
                for row in conn.execute(f"{_MESSAGE} WHERE message_id IN ({marks(group)})", group):
                    found[row[0]] = message_from_row(row)
        return [found[i] for i in ids if i in found]

    def find_message_by_content(self, conversation_id: int, role: str, content: str) -> list[Message]:
        role_value = str(getattr(role, "value", role))
        with self._op() as conn:
            if texts.is_shared(content):
                text_id = texts.find(conn, content)
                if text_id is None:
                    return []
                rows = conn.execute(f"{_MESSAGE} WHERE message_id IN (SELECT message_id FROM messages WHERE "
                                    "conversation_id = ? AND role = ? AND text_id = ?) ORDER BY seq",
                                    (conversation_id, role_value, text_id)).fetchall()
            else:
                rows = conn.execute(f"{_MESSAGE} WHERE message_id IN (SELECT message_id FROM messages WHERE "
                                    "conversation_id = ? AND role = ? AND text_id IS NULL AND content = ?) "
                                    "ORDER BY seq", (conversation_id, role_value, content)).fetchall()
        return [message_from_row(r) for r in rows]

    def list_parts(self, message_ids: Sequence[int]) -> dict[int, list[MessagePart]]:
        ids = sorted(set(message_ids))
        out: dict[int, list[MessagePart]] = {}
        with self._op() as conn:
            codec = self._scope.db.codec
            for group in chunks(ids):
                rows = conn.execute(f"SELECT {texts.PART_COLUMNS} FROM message_parts WHERE message_id IN "
                                    f"({marks(group)}) ORDER BY message_id, ordinal", group).fetchall()
                spans = texts.contents(conn, [r[0] for r in rows if r[7] is not None])
                for r in rows:
                    text, raw = texts.rebuild_part(conn, codec, r, spans.get(r[0]))
                    out.setdefault(r[0], []).append(
                        MessagePart(part_id(r[0], r[1]), r[0], r[1], PartKind(r[2]), text, r[3], r[4], bool(r[5]),
                                    raw, r[6]))
        return out

    def message_count(self, conversation_id: int) -> int:
        with self._op() as conn:
            return int(conn.execute("SELECT count(*) FROM messages WHERE conversation_id = ?",
                                    (conversation_id,)).fetchone()[0])

    def delete_messages(self, message_ids: Sequence[int]) -> DeleteResult:
        ids = list(dict.fromkeys(message_ids))
        if not ids:
            return DeleteResult((), ())
        with self._op(write=True) as conn:
            existing: dict[int, int] = {}
            summarized: set[int] = set()
            for group in chunks(ids):
                existing.update(conn.execute(f"SELECT message_id, conversation_id FROM messages "
                                             f"WHERE message_id IN ({marks(group)})", group).fetchall())
                summarized.update(r[0] for r in conn.execute(
                    f"SELECT DISTINCT message_id FROM summary_messages WHERE message_id IN ({marks(group)})", group))
            deleted = [i for i in ids if i in existing and i not in summarized]
            text_ids: set[int] = set()
            for group in chunks(deleted):
                text_ids.update(r[0] for r in conn.execute(
                    f"SELECT text_id FROM messages WHERE text_id IS NOT NULL AND message_id IN ({marks(group)})",
                    group))
                conn.execute(f"DELETE FROM context_items WHERE message_id IN ({marks(group)})", group)
                conn.execute(f"DELETE FROM messages WHERE message_id IN ({marks(group)})", group)
            texts.forget_unused(conn, text_ids)
            for conversation_id in sorted({existing[i] for i in deleted}):
                renumber(conn, conversation_id)
        return DeleteResult(tuple(deleted), tuple(i for i in ids if i in summarized and i in existing))
