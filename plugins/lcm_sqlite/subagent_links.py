"""The sub-agent links of the conversations repository: which run a conversation is and where it started."""

from __future__ import annotations

import sqlite3

from lcm_framework.plugin_api.storage import SUBAGENT_LINK_FIELDS, SubagentLink, merged_link

from .scope import Repository
from .statements import marks

_LINK_COLUMNS = ", ".join(SUBAGENT_LINK_FIELDS)
_LINK = f"SELECT {_LINK_COLUMNS} FROM subagent_links"


class SqliteSubagentLinks(Repository):
    """``link_subagent``, ``get_subagent_link`` and ``list_subagent_links`` of ``SqliteConversations``."""

    domain = "conversations"

    def link_subagent(self, link: SubagentLink) -> SubagentLink:
        with self._op(write=True) as conn:
            self._require_conversation(conn, link.child_conversation_id)
            if link.parent_conversation_id is not None:
                self._require_conversation(conn, link.parent_conversation_id)
            if link.parent_message_id is not None and conn.execute(
                    "SELECT 1 FROM messages WHERE message_id = ?", (link.parent_message_id,)).fetchone() is None:
                raise self._not_found("message")
            row = conn.execute(f"{_LINK} WHERE child_conversation_id = ?", (link.child_conversation_id,)).fetchone()
            stored = merged_link(None if row is None else SubagentLink(*row), link)
            conn.execute(f"INSERT OR REPLACE INTO subagent_links ({_LINK_COLUMNS}) VALUES "
                         f"({marks(SUBAGENT_LINK_FIELDS)})", tuple(getattr(stored, f) for f in SUBAGENT_LINK_FIELDS))
        return stored

    def get_subagent_link(self, child_conversation_id: int) -> SubagentLink | None:
        with self._op() as conn:
            row = conn.execute(f"{_LINK} WHERE child_conversation_id = ?", (child_conversation_id,)).fetchone()
        return None if row is None else SubagentLink(*row)

    def list_subagent_links(self, *, parent_session_id: str | None = None) -> list[SubagentLink]:
        with self._op() as conn:
            if parent_session_id is None:
                rows = conn.execute(f"{_LINK} ORDER BY child_conversation_id").fetchall()
            else:
                rows = conn.execute(f"{_LINK} WHERE parent_session_id = ? ORDER BY child_conversation_id",
                                    (parent_session_id,)).fetchall()
        return [SubagentLink(*r) for r in rows]

    def _require_conversation(self, conn: sqlite3.Connection, conversation_id: int) -> None:
        if conn.execute("SELECT 1 FROM conversations WHERE conversation_id = ?", (conversation_id,)).fetchone() \
                is None:
            raise self._not_found("conversation")
