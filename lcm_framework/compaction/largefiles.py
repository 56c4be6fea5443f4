"""Large blocks (tool results, ``<file>`` blocks, pastes) stored once as files.

The stored message stays verbatim (lossless); what the model and the
summarizer see is rewritten: every block above
``compaction.large_file_token_threshold`` becomes a compact reference
``[Large file file_xxx: name, N tokens - lcm describe file_xxx]`` followed by
its exploration summary (``Exploration: ...``, by kind: ``lcm_framework.explore``,
or a model's when one is configured). The block is
kept under ``$LCM_HOME/projects/<project id>/files/<file_id>.<ext>`` (private,
durable, atomic, content-addressed so the same block is stored once) with a
``large_files`` row holding an exploration summary.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from ..errors import ConflictError, DataValidationError, NotFoundError
from ..explore import explore
from ..safe_paths import atomic_write_private
from ..storage.models import LargeFile
from ..summarize.tokens import estimate_tokens
from .ids import FILE_ID, file_id

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage

FILE_BLOCK = re.compile(
    r"<file(?P<attrs>[^>]*)>(?P<body>.*?)</file>", re.DOTALL | re.IGNORECASE
)
NAME_ATTR = re.compile(r"""(?:name|path)\s*=\s*["']([^"']+)["']""")

Explorer = Callable[[str, str | None], str]
"""Makes an exploration summary of (content, name): a model with the large_file prompt (else ``explore``)."""


@dataclass(frozen=True, slots=True)
class Rewritten:
    text: str
    file_ids: tuple[str, ...]


class LargeFileStore:
    """Externalizes large blocks of one project's messages and reads them back."""

    def __init__(
        self,
        storage: ProjectStorage,
        home: Path,
        threshold_tokens: int,
        explorer: Explorer | None = None,
    ) -> None:
        self.storage = storage
        self.home = home
        self.directory = home / "projects" / storage.project_id / "files"
        self.threshold = threshold_tokens
        self.explorer = explorer

    def path_for(self, record: LargeFile) -> Path:
        return self._path(record.file_id, record.file_name)

    def _path(self, fid: str, name: str | None) -> Path:
        """Where a large file lives; DataValidationError for an id ``file_id`` cannot make (never a path)."""
        if not FILE_ID.fullmatch(fid):
            raise DataValidationError("a large file id is not a content id (file_ and 16 hex digits)",
                                      backend="files", domain="large_files", project=self.storage.project_id,
                                      code="invalid_file_id")
        return self.directory / f"{fid}{_extension(name)}"

    def reference(self, record: LargeFile) -> str:
        name = record.file_name or "pasted content"
        return f"[Large file {record.file_id}: {name}, {record.token_count} tokens - lcm describe {record.file_id}]"

    def read(self, record: LargeFile) -> str:
        try:
            return self.path_for(record).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotFoundError(
                f"content of {record.file_id} is missing from the files directory",
                backend="files",
                domain="large_files",
                project=self.storage.project_id,
                code="file_missing",
            ) from None

    def externalize(self, conversation_id: int, message_id: int | None, content: str, name: str | None) -> LargeFile:
        """Store ``content`` once (idempotent by content hash) and return its record."""
        fid = file_id(content)
        existing = self.storage.large_files.get_file(fid)
        record = existing or LargeFile(
            file_id=fid,
            conversation_id=conversation_id,
            message_id=message_id,
            file_name=name,
            mime_type=(mimetypes.guess_type(name)[0] if name else None) or "text/plain",
            byte_size=len(content.encode("utf-8")),
            token_count=estimate_tokens(content),
            sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
            exploration_summary=self._explore(content, name),
            created_at=datetime.now(UTC),
        )
        self.write_once(record.file_id, record.file_name, content)
        if existing is None:
            try:
                record = self.storage.large_files.create_file(record)
            except ConflictError:
                record = self.storage.large_files.get_file(fid) or record
        return record

    def write_once(self, fid: str, name: str | None, content: str) -> Path | None:
        """Publish ``content`` as large file ``fid`` named ``name`` unless something is at its path already
        (never replaced); the path when this call created it. DataValidationError unless ``fid`` is the
        id of ``content``."""
        if file_id(content) != fid:
            raise DataValidationError("a large file's content does not give its id", backend="files",
                                      domain="large_files", project=self.storage.project_id, code="file_id_mismatch")
        path = self._path(fid, name)
        if os.path.lexists(path):
            return None
        try:
            atomic_write_private(path, content.encode("utf-8"), require_absent=True, home=self.home)
        except FileExistsError:
            return None  # a concurrent writer published the same content-addressed file
        return path

    def rewrite(self, conversation_id: int, message_id: int | None, text: str) -> Rewritten:
        """``text`` with every block above the threshold replaced by its reference."""
        if estimate_tokens(text) <= self.threshold:
            return Rewritten(text, ())
        ids: list[str] = []

        def swap(content: str, name: str | None) -> str:
            record = self.externalize(conversation_id, message_id, content, name)
            ids.append(record.file_id)
            return f"{self.reference(record)}\nExploration: {record.exploration_summary}"

        def file_block(match: re.Match[str]) -> str:
            body = match.group("body")
            if estimate_tokens(body) <= self.threshold:
                return match.group(0)
            name = NAME_ATTR.search(match.group("attrs"))
            return swap(body, name.group(1) if name else None)

        out = FILE_BLOCK.sub(file_block, text)
        if estimate_tokens(out) > self.threshold:
            out = swap(out, None)
        return Rewritten(out, tuple(dict.fromkeys(ids)))

    def _explore(self, content: str, name: str | None) -> str:
        if self.explorer is not None:
            try:
                text = self.explorer(content, name).strip()
                if text:
                    return text
            except Exception:  # exploration by a model is best effort; the deterministic one always works
                pass
        return explore(content, name)


def _extension(name: str | None) -> str:
    suffix = PurePath(name).suffix if name else ""
    return suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", suffix or "") else ".txt"
