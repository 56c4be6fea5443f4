"""Summary records and their DAG lineage (leaf -> messages, condensed -> parent summaries)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import NewSummary, Summary, SummaryKind

from .base import Repository, utc, utc_required

_COLUMNS = ("summary_id, conversation_id, kind, depth, content, token_count, earliest_at, latest_at, "
            "descendant_count, file_ids, created_at")
_SELECT = f"SELECT {_COLUMNS} FROM summaries"


class PgSummaries(Repository):
    domain = "summaries"

    def _summary(self, row: Sequence[Any]) -> Summary:
        return Summary(row[0], self._int(row[1]), SummaryKind(row[2]), self._int(row[3]), row[4],
                       self._int(row[5]), utc(row[6]), utc(row[7]), self._int(row[8]), tuple(row[9]),
                       utc_required(row[10]))

    def create_summary(self, summary: NewSummary) -> Summary:
        kind = SummaryKind(summary.kind)
        with self._cursor() as cur:
            cur.execute("SELECT 1 FROM conversations WHERE project_id = %s AND conversation_id = %s",
                        (self._project, summary.conversation_id))
            if cur.fetchone() is None:
                raise self._not_found("conversation")
            cur.execute(
                f"INSERT INTO summaries (project_id, {_COLUMNS.replace(', created_at', '')}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                f"ON CONFLICT (project_id, summary_id) DO NOTHING RETURNING {_COLUMNS}",
                (self._project, summary.summary_id, summary.conversation_id, kind.value, summary.depth,
                 summary.content, summary.token_count, utc(summary.earliest_at), utc(summary.latest_at),
                 summary.descendant_count, list(summary.file_ids)),
            )
            row = cur.fetchone()
            if row is None:
                raise self._conflict("a summary with this id already exists", "duplicate")
            if summary.source_message_ids:
                ids = list(summary.source_message_ids)
                cur.execute("SELECT count(DISTINCT message_id) FROM messages WHERE project_id = %s "
                            "AND message_id = ANY(%s)", (self._project, ids))
                if cur.fetchone()[0] != len(set(ids)):
                    raise self._not_found("a source message")
                cur.execute("INSERT INTO summary_messages (project_id, summary_id, ordinal, message_id) "
                            "SELECT %s, %s, u.ord - 1, u.mid FROM unnest(%s::bigint[]) WITH ORDINALITY "
                            "AS u(mid, ord)", (self._project, summary.summary_id, ids))
            if summary.parent_ids:
                cur.execute("INSERT INTO summary_parents (project_id, summary_id, ordinal, parent_id) "
                            "SELECT %s, %s, u.ord - 1, u.pid FROM unnest(%s::text[]) WITH ORDINALITY "
                            "AS u(pid, ord)", (self._project, summary.summary_id, list(summary.parent_ids)))
            return self._summary(row)

    def get_summary(self, summary_id: str) -> Summary | None:
        with self._cursor() as cur:
            cur.execute(f"{_SELECT} WHERE project_id = %s AND summary_id = %s", (self._project, summary_id))
            row = cur.fetchone()
        return self._summary(row) if row else None

    def get_summaries(self, summary_ids: Sequence[str]) -> list[Summary]:
        if not summary_ids:
            return []
        with self._cursor() as cur:
            cur.execute(f"{_SELECT} WHERE project_id = %s AND summary_id = ANY(%s)",
                        (self._project, list(summary_ids)))
            found = {s.summary_id: s for s in (self._summary(r) for r in cur.fetchall())}
        return [found[i] for i in summary_ids if i in found]

    def list_summaries(self, conversation_id: int, *, depth: int | None = None) -> list[Summary]:
        with self._cursor() as cur:
            cur.execute(f"{_SELECT} WHERE project_id = %s AND conversation_id = %s "
                        "AND (%s::bigint IS NULL OR depth = %s::bigint) ORDER BY created_at, summary_id",
                        (self._project, conversation_id, depth, depth))
            return [self._summary(r) for r in cur.fetchall()]

    def source_message_ids(self, summary_id: str) -> list[int]:
        return [self._int(v) for v in self._column(
            "SELECT message_id FROM summary_messages WHERE project_id = %s AND summary_id = %s ORDER BY ordinal",
            summary_id)]

    def parent_ids(self, summary_id: str) -> list[str]:
        return self._column("SELECT parent_id FROM summary_parents WHERE project_id = %s AND summary_id = %s "
                            "ORDER BY ordinal", summary_id)

    def child_ids(self, summary_id: str) -> list[str]:
        return self._column(
            "SELECT p.summary_id FROM summary_parents p JOIN summaries s ON s.project_id = p.project_id "
            "AND s.summary_id = p.summary_id WHERE p.project_id = %s AND p.parent_id = %s "
            "GROUP BY p.summary_id, s.created_at ORDER BY s.created_at, p.summary_id", summary_id)

    def _column(self, sql: str, summary_id: str) -> list[Any]:
        with self._cursor() as cur:
            cur.execute(sql, (self._project, summary_id))
            return [r[0] for r in cur.fetchall()]

    def summaries_for_messages(self, message_ids: Sequence[int]) -> dict[int, list[str]]:
        ids = list(message_ids)
        out: dict[int, list[str]] = {}
        if not ids:
            return out
        with self._cursor() as cur:
            cur.execute("SELECT sm.message_id, sm.summary_id FROM summary_messages sm JOIN summaries s "
                        "ON s.project_id = sm.project_id AND s.summary_id = sm.summary_id "
                        "WHERE sm.project_id = %s AND sm.message_id = ANY(%s) "
                        "GROUP BY sm.message_id, sm.summary_id, s.created_at "
                        "ORDER BY sm.message_id, s.created_at, sm.summary_id", (self._project, ids))
            for message_id, summary_id in cur.fetchall():
                out.setdefault(self._int(message_id), []).append(summary_id)
        return out

    def count_by_depth(self, conversation_id: int | None = None) -> dict[int, int]:
        with self._cursor() as cur:
            cur.execute("SELECT depth, count(*) FROM summaries WHERE project_id = %s "
                        "AND (%s::bigint IS NULL OR conversation_id = %s::bigint) GROUP BY depth ORDER BY depth",
                        (self._project, conversation_id, conversation_id))
            return {self._int(d): self._int(n) for d, n in cur.fetchall()}
