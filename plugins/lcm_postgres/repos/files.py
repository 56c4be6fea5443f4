"""Metadata of large files (their content lives on disk)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import LargeFile

from .base import Repository, utc, utc_required

_COLUMNS = ("file_id, conversation_id, message_id, file_name, mime_type, byte_size, token_count, sha256, "
            "exploration_summary, created_at")


class PgLargeFiles(Repository):
    domain = "large_files"

    def _file(self, r: Sequence[Any]) -> LargeFile:
        return LargeFile(r[0], self._int(r[1]), None if r[2] is None else self._int(r[2]), r[3], r[4],
                         self._int(r[5]), self._int(r[6]), r[7], r[8], utc_required(r[9]))

    def create_file(self, file: LargeFile) -> LargeFile:
        with self._cursor() as cur:
            cur.execute("SELECT 1 FROM conversations WHERE project_id = %s AND conversation_id = %s",
                        (self._project, file.conversation_id))
            if cur.fetchone() is None:
                raise self._not_found("conversation")
            if file.message_id is not None:
                cur.execute("SELECT 1 FROM messages WHERE project_id = %s AND message_id = %s",
                            (self._project, file.message_id))
                if cur.fetchone() is None:
                    raise self._not_found("message")
            cur.execute(
                f"INSERT INTO large_files (project_id, {_COLUMNS}) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, coalesce(%s, clock_timestamp())) "
                f"ON CONFLICT (project_id, file_id) DO NOTHING RETURNING {_COLUMNS}",
                (self._project, file.file_id, file.conversation_id, file.message_id, file.file_name,
                 file.mime_type, file.byte_size, file.token_count, file.sha256, file.exploration_summary,
                 utc(file.created_at)),
            )
            row = cur.fetchone()
            if row is None:
                raise self._conflict("a large file with this id already exists", "duplicate")
            return self._file(row)

    def get_file(self, file_id: str) -> LargeFile | None:
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM large_files WHERE project_id = %s AND file_id = %s",
                        (self._project, file_id))
            row = cur.fetchone()
        return self._file(row) if row else None

    def list_files(self, conversation_id: int) -> list[LargeFile]:
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM large_files WHERE project_id = %s AND conversation_id = %s "
                        "ORDER BY created_at, file_id", (self._project, conversation_id))
            return [self._file(r) for r in cur.fetchall()]
