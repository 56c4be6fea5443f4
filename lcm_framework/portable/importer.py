"""Read portable records into the configured backend (``lcm import-records``).

Every record is checked by ``reader`` (types, id formats, digest) and scrubbed again by ``rescrub`` with
the scrubber ``lcm import`` uses before anything is stored. Idempotent: a memory whose normalized text
the project already holds is skipped, and so is a conversation segment whose stored records give the
same digest. Each record is applied in one transaction; a checkpoint (``$LCM_HOME/imports/<digest of the
path>.json``: the line and digest of the last applied record and the header's digest) lets a killed
import resume after it. The checkpoint is removed once the whole file is applied.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..memory.scope import user_wide_root
from ..memory.text import normalize
from ..safe_paths import atomic_write_private
from ..storage.lineage import Lineage
from .export import Locator, conversation_record
from .reader import lines, read_header, read_record
from .records import RecordFormatError, digest, required_when, when
from .rescrub import Rescrubber

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage, Repositories


@dataclass(slots=True)
class ImportReport:
    applied: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    resumed_after_line: int = 0
    lines: int = 0

    def count(self, kind: str, applied: bool) -> None:
        target = self.applied if applied else self.skipped
        target[kind] = target.get(kind, 0) + 1


class Checkpoint:
    def __init__(self, home: Path, source: Path, header_line: str) -> None:
        key = hashlib.sha256(str(source.resolve()).encode()).hexdigest()[:32]
        self.home = home
        self.path = home / "imports" / f"{key}.json"
        self.header = hashlib.sha256(header_line.encode()).hexdigest()

    def last(self) -> tuple[int, str | None]:
        """The line and digest of the last applied record of this file, ``(0, None)`` for a fresh start."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return 0, None
        if data.get("header") != self.header:
            return 0, None
        return int(data.get("line", 0)), data.get("digest")

    def save(self, line: int, digest: str) -> None:
        data = json.dumps({"header": self.header, "line": line, "digest": digest}).encode()
        atomic_write_private(self.path, data, home=self.home)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def import_file(app: App, path: Path, *, here: bool = False) -> ImportReport:
    """Apply every record of ``path``; ``here`` puts a one-project stream into the current project."""
    from ..scrub.gate import project_scrubber

    report = ImportReport()
    rescrubber = Rescrubber(project_scrubber(app))  # fails closed: no scrubber, nothing imported
    with _open(path) as stream:
        numbered = lines(stream)
        header_line = next((text for _, text in numbered), "")
        read_header(header_line)
        checkpoint = Checkpoint(Path(app.config.home), path, header_line)
        done = _still_valid(path, *checkpoint.last())
        target = _Target(app, here, rescrubber)
        try:
            for number, line in numbered:
                if not line.strip():
                    continue
                record = read_record(line, number)
                report.lines = number
                try:
                    if record["type"] == "project":
                        target.switch(record)
                        continue
                    if number <= done:
                        report.resumed_after_line = done
                        continue
                    target.apply(record, report)
                except RecordFormatError as exc:
                    raise RecordFormatError(f"line {number}: {exc}") from None
                checkpoint.save(number, record["digest"])
        finally:
            target.close()
    checkpoint.clear()
    return report


@contextmanager
def _open(path: Path) -> Iterator[IO[bytes]]:
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a directory, FIFO or device (/dev/zero) is never read
            raise RecordFormatError(f"cannot read {path}: not a regular file")
        stream = path.open("rb")
    except OSError as exc:
        raise RecordFormatError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    with stream:
        yield stream


def _still_valid(path: Path, line: int, digest: str | None) -> int:
    """``line`` when the file still holds the checkpointed record there, else 0 (apply it all again)."""
    if not line:
        return 0
    with _open(path) as stream:
        for number, text in lines(stream):
            if number == line:
                try:
                    return line if read_record(text, number)["digest"] == digest else 0
                except RecordFormatError:
                    return 0
    return 0


class _Target:
    """The project storage records are being applied to."""

    def __init__(self, app: App, here: bool, rescrubber: Rescrubber) -> None:
        self.app = app
        self.here = here
        self.rescrubber = rescrubber
        self.storage: ProjectStorage | None = None
        self.projects = 0

    def switch(self, record: dict[str, Any]) -> None:
        self.close()
        if record["user_wide"]:
            root: Path | str | None = user_wide_root(self.app)
        elif self.here:
            self.projects += 1
            if self.projects > 1:
                raise RecordFormatError("--here takes a file of one project (this one holds several)")
            root = None
        else:
            root = record["root"]
        self.storage = self.app.storage.open_project(self.app.project_ref(root))
        self.known = {normalize(m.content) for m in self.storage.promoted_memory.list_memories(include_archived=True)}

    def close(self) -> None:
        if self.storage is not None:
            self.storage.close()
            self.storage = None

    def apply(self, record: dict[str, Any], report: ImportReport) -> None:
        """Apply a checked ``conversation`` or ``memory`` record, scrubbed again first."""
        if self.storage is None:
            raise RecordFormatError("a record came before any project record")
        clean = self.rescrubber.record(record)
        if clean["type"] == "conversation":
            report.count("conversation", self._conversation(self.storage, clean, report))
        else:
            report.count("memory", self._memory(self.storage, clean))

    def _conversation(self, storage: ProjectStorage, record: dict[str, Any], report: ImportReport) -> bool:
        from .apply import apply_conversation

        existing = storage.conversations.find_conversations(record["session_id"])
        if record["segment"] < len(existing):
            stored = conversation_record(storage, Path(self.app.config.home), existing[record["segment"]],
                                         Locator(storage))
            if stored["digest"] != digest(record):
                report.conflicts.append(f"session {record['session_id']} segment {record['segment']} differs "
                                        "from the stored one: kept the stored one")
            return False
        apply_conversation(storage, Path(self.app.config.home), record)
        return True

    def _memory(self, storage: ProjectStorage, record: dict[str, Any]) -> bool:
        from ..storage.models import Memory, RecallStats, Surfacing

        normalized = normalize(record["content"])
        if normalized in self.known:
            return False
        lineage = record["lineage"]
        messages = _message_ids(storage, lineage["messages"])
        metadata = Lineage(lineage["origin"], tuple(lineage["summaries"]), tuple(messages), lineage["kind"],
                           dict(lineage["extra"])).to_metadata()
        recall = record["recall"]
        prefix = "gmem_" if storage.project_id == self.app.project_ref(user_wide_root(self.app)).project_id \
            else "mem_"

        def apply(repos: Repositories) -> None:
            memory = repos.promoted_memory.restore_memory(Memory(
                0, record["content"], tuple(record["tags"]), record["confidence"], record["source_summary_id"],
                metadata, record["archived"], required_when(record["created_at"]), required_when(record["updated_at"])))
            ref = f"{prefix}{memory.memory_id}"
            repos.recall.restore_history(
                RecallStats(ref, recall["surfaced"], recall["useful"], recall["not_useful"],
                            when(recall["last_surfaced_at"])),
                [Surfacing(ref, query, required_when(at)) for query, at in recall["surfacings"]])

        storage.transaction(apply)
        self.known.add(normalized)
        return True


def _message_ids(storage: ProjectStorage, keys: list[list[Any]]) -> list[int]:
    """Local ids of ``[session_id, segment, seq]`` message names; names this project lacks are dropped."""
    found: list[int] = []
    for session_id, segment, seq in keys:
        segments = storage.conversations.find_conversations(session_id)
        if segment < len(segments):
            after = seq - 1 if seq > 0 else None
            messages = storage.conversations.list_messages(segments[segment].conversation_id, after_seq=after,
                                                           limit=1)
            found.extend(m.message_id for m in messages if m.seq == seq)
    return found
