"""Summary records and their DAG lineage (leaf → messages, condensed → parent summaries)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import NewSummary, Summary, SummaryKind

from .clock import from_us, now_us, opt_dt, opt_us
from .scope import Repository
from .statements import chunks, marks

_COLUMNS = ("summary_id, conversation_id, kind, depth, content, token_count, earliest_at, latest_at, "
            "descendant_count, file_ids, created_at")
_SELECT = f"SELECT {_COLUMNS} FROM summaries"


def _summary(row: Sequence[Any]) -> Summary:
    return Summary(summary_id=row[0], conversation_id=row[1], kind=SummaryKind(row[2]), depth=row[3],
                   content=row[4], token_count=row[5], earliest_at=opt_dt(row[6]), latest_at=opt_dt(row[7]),
                   descendant_count=row[8], file_ids=tuple(json.loads(row[9])), created_at=from_us(row[10]))


class SqliteSummaries(Repository):
    domain = "summaries"

    def create_summary(self, summary: NewSummary) -> Summary:
        kind = SummaryKind(summary.kind)
        created = now_us()
        row = (summary.summary_id, summary.conversation_id, kind.value, summary.depth, summary.content,
               summary.token_count, opt_us(summary.earliest_at), opt_us(summary.latest_at),
               summary.descendant_count, json.dumps(list(summary.file_ids)), created)
        with self._op(write=True) as conn:
            if conn.execute("SELECT 1 FROM conversations WHERE conversation_id = ?",
                            (summary.conversation_id,)).fetchone() is None:
                raise self._not_found("conversation")
            if conn.execute("SELECT 1 FROM summaries WHERE summary_id = ?", (summary.summary_id,)).fetchone():
                raise self._conflict("a summary with this id already exists", "duplicate")
            conn.execute(f"INSERT INTO summaries ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            conn.executemany("INSERT INTO summary_messages (summary_id, ordinal, message_id) VALUES (?, ?, ?)",
                             [(summary.summary_id, i, m) for i, m in enumerate(summary.source_message_ids)])
            conn.executemany("INSERT INTO summary_parents (summary_id, ordinal, parent_id) VALUES (?, ?, ?)",
                             [(summary.summary_id, i, p) for i, p in enumerate(summary.parent_ids)])
        return _summary(row)

    def get_summary(self, summary_id: str) -> Summary | None:
        with self._op() as conn:
            row = conn.execute(f"{_SELECT} WHERE summary_id = ?", (summary_id,)).fetchone()
        return _summary(row) if row else None

    def get_summaries(self, summary_ids: Sequence[str]) -> list[Summary]:
        found: dict[str, Summary] = {}
        with self._op() as conn:
            for group in chunks(sorted(set(summary_ids))):
                for row in conn.execute(f"{_SELECT} WHERE summary_id IN ({marks(group)})", group):
                    found[row[0]] = _summary(row)
        return [found[i] for i in summary_ids if i in found]

    def list_summaries(self, conversation_id: int, *, depth: int | None = None) -> list[Summary]:
        sql = f"{_SELECT} WHERE conversation_id = ?" + (" AND depth = ?" if depth is not None else "")
        args = (conversation_id,) if depth is None else (conversation_id, depth)
        with self._op() as conn:
            rows = conn.execute(sql + " ORDER BY created_at, summary_id", args).fetchall()
        return [_summary(r) for r in rows]

    def source_message_ids(self, summary_id: str) -> list[int]:
        return self._column("SELECT message_id FROM summary_messages WHERE summary_id = ? ORDER BY ordinal",
                            summary_id)

    def parent_ids(self, summary_id: str) -> list[str]:
        return self._column("SELECT parent_id FROM summary_parents WHERE summary_id = ? ORDER BY ordinal",
                            summary_id)

    def child_ids(self, summary_id: str) -> list[str]:
        return self._column("SELECT DISTINCT p.summary_id, s.created_at FROM summary_parents p JOIN summaries s "
                            "ON s.summary_id = p.summary_id WHERE p.parent_id = ? "
                            "ORDER BY s.created_at, p.summary_id", summary_id)

    def _column(self, sql: str, summary_id: str) -> list[Any]:
        with self._op() as conn:
            return [r[0] for r in conn.execute(sql, (summary_id,))]

    def summaries_for_messages(self, message_ids: Sequence[int]) -> dict[int, list[str]]:
        ids = sorted(set(message_ids))
        out: dict[int, list[str]] = {}
        with self._op() as conn:
            for group in chunks(ids):
                rows = conn.execute(f"SELECT sm.message_id, sm.summary_id FROM summary_messages sm JOIN summaries s "
                                    f"ON s.summary_id = sm.summary_id WHERE sm.message_id IN ({marks(group)}) "
                                    f"ORDER BY sm.message_id, s.created_at, s.summary_id", group)
                for message_id, summary_id in rows:
                    out.setdefault(message_id, []).append(summary_id)
        return out

    def count_by_depth(self, conversation_id: int | None = None) -> dict[int, int]:
        sql = "SELECT depth, count(*) FROM summaries"
        args: tuple[int, ...] = ()
        if conversation_id is not None:
            sql, args = sql + " WHERE conversation_id = ?", (conversation_id,)
        with self._op() as conn:
            return dict(conn.execute(sql + " GROUP BY depth ORDER BY depth", args).fetchall())
