"""The sub-agent links of the conversations repository: which run a conversation is and where it started."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import SUBAGENT_LINK_FIELDS, SubagentLink, merged_link

from .base import Repository
from .locks import advisory_key, lock_conversation

_LINK_COLUMNS = ", ".join(SUBAGENT_LINK_FIELDS)
_LINK = f"SELECT {_LINK_COLUMNS} FROM subagent_links"


class PgSubagentLinks(Repository):
    """``link_subagent``, ``get_subagent_link`` and ``list_subagent_links`` of ``PgConversations``."""

    domain = "conversations"

    def _link(self, row: Sequence[Any]) -> SubagentLink:
        def maybe(value: Any) -> int | None:
            return None if value is None else self._int(value)

        return SubagentLink(self._int(row[0]), row[1], row[2], row[3], row[4], maybe(row[5]), maybe(row[6]), row[7])

    def link_subagent(self, link: SubagentLink) -> SubagentLink:
        with self._cursor() as cur:
            self._lock_parent(cur, link.parent_session_id)
            self._lock_conversation(cur, link.child_conversation_id)
            if link.parent_conversation_id is not None:
                cur.execute("SELECT 1 FROM conversations WHERE conversation_id = %s AND project_id = %s",
                            (link.parent_conversation_id, self._project))
                if cur.fetchone() is None:
                    raise self._not_found("conversation")
            if link.parent_message_id is not None:
                cur.execute("SELECT 1 FROM messages WHERE message_id = %s AND project_id = %s",
                            (link.parent_message_id, self._project))
                if cur.fetchone() is None:
                    raise self._not_found("message")
            cur.execute(f"{_LINK} WHERE project_id = %s AND child_conversation_id = %s",
                        (self._project, link.child_conversation_id))
            row = cur.fetchone()
            stored = merged_link(None if row is None else self._link(row), link)
            values = [getattr(stored, f) for f in SUBAGENT_LINK_FIELDS]
            updates = ", ".join(f"{f} = excluded.{f}" for f in SUBAGENT_LINK_FIELDS[1:])
            cur.execute(f"INSERT INTO subagent_links (project_id, {_LINK_COLUMNS}) VALUES "
                        f"(%s, {', '.join('%s' for _ in values)}) "
                        f"ON CONFLICT (child_conversation_id) DO UPDATE SET {updates}", (self._project, *values))
        return stored

    def get_subagent_link(self, child_conversation_id: int) -> SubagentLink | None:
        with self._cursor() as cur:
            cur.execute(f"{_LINK} WHERE project_id = %s AND child_conversation_id = %s",
                        (self._project, child_conversation_id))
            row = cur.fetchone()
        return None if row is None else self._link(row)

    def _lock_parent(self, cur: Any, parent_session_id: str) -> None:
        """Runs of one parent session are linked one transaction at a time (a run and its parent stored by
        two processes at once find each other: the second waits, then sees the first's rows)."""
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("subagents", self._project, parent_session_id),))

    def list_subagent_links(self, *, parent_session_id: str | None = None) -> list[SubagentLink]:
        with self._cursor() as cur:
            if parent_session_id is not None:
                self._lock_parent(cur, parent_session_id)
            cur.execute(f"{_LINK} WHERE project_id = %s AND (%s::text IS NULL OR parent_session_id = %s) "
                        "ORDER BY child_conversation_id", (self._project, parent_session_id, parent_session_id))
            return [self._link(r) for r in cur.fetchall()]

    def _lock_conversation(self, cur: Any, conversation_id: int) -> None:
        lock_conversation(cur, self._project, conversation_id)
        cur.execute("SELECT 1 FROM conversations WHERE conversation_id = %s AND project_id = %s",
                    (conversation_id, self._project))
        if cur.fetchone() is None:
            raise self._not_found("conversation")
