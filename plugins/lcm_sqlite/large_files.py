"""Large-file metadata (the content itself lives in the project's ``files/`` directory)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lcm_framework.plugin_api.storage import LargeFile

from .clock import from_us, to_us
from .scope import Repository

_COLUMNS = ("file_id, conversation_id, message_id, file_name, mime_type, byte_size, token_count, sha256, "
            "exploration_summary, created_at")


def _file(row: Sequence[Any]) -> LargeFile:
    return LargeFile(file_id=row[0], conversation_id=row[1], message_id=row[2], file_name=row[3], mime_type=row[4],
                     byte_size=row[5], token_count=row[6], sha256=row[7], exploration_summary=row[8],
                     created_at=from_us(row[9]))


class SqliteLargeFiles(Repository):
    domain = "large_files"

    def create_file(self, file: LargeFile) -> LargeFile:
        row = (file.file_id, file.conversation_id, file.message_id, file.file_name, file.mime_type, file.byte_size,
               file.token_count, file.sha256, file.exploration_summary, to_us(file.created_at))
        with self._op(write=True) as conn:
            if conn.execute("SELECT 1 FROM large_files WHERE file_id = ?", (file.file_id,)).fetchone():
                raise self._conflict("a large file with this id already exists", "duplicate")
            conn.execute(f"INSERT INTO large_files ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        return _file(row)

    def get_file(self, file_id: str) -> LargeFile | None:
        with self._op() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM large_files WHERE file_id = ?", (file_id,)).fetchone()
        return _file(row) if row else None

    def list_files(self, conversation_id: int) -> list[LargeFile]:
        with self._op() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM large_files WHERE conversation_id = ? "
                                "ORDER BY created_at, file_id", (conversation_id,)).fetchall()
        return [_file(r) for r in rows]
