"""What an import did: per-file reports, the run summary and progress events."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass(frozen=True, slots=True)
class FileError:
    """A sanitized, typed failure of one source (no payload, no database detail)."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ConversationTouched:
    """A conversation that received (or would receive) messages from one source."""

    project_root: str
    project_id: str
    session_id: str
    conversation_id: int | None
    new_messages: int
    subagent_run: bool = False


@dataclass(frozen=True, slots=True)
class ProjectFilled:
    """A project that received (or would receive) messages in one import run."""

    project_root: str
    project_id: str
    sessions: int
    """Sessions with new messages, sub-agent runs not counted."""
    subagent_runs: int
    new_messages: int


@dataclass
class FileReport:
    """The outcome of importing one transcript file.

    ``records`` counts physical records read past the resume point,
    ``stored`` the native records newly inserted, ``skipped`` records already
    stored (idempotent retries), ``messages`` the messages newly stored.
    ``status`` is ``imported``, ``unchanged``, ``skipped`` (not a transcript of
    a selected format) or ``failed``.
    """

    path: str
    locator: str = ""
    format_id: str | None = None
    status: str = "imported"
    project_root: str | None = None
    project_id: str | None = None
    session_id: str | None = None
    conversation_id: int | None = None
    bytes_total: int = 0
    bytes_read: int = 0
    resumed_from: int = 0
    rescanned: bool = False
    records: int = 0
    stored: int = 0
    skipped: int = 0
    messages: int = 0
    quarantined: Counter[str] = field(default_factory=Counter)
    redactions: Counter[str] = field(default_factory=Counter)
    error: FileError | None = None
    runs: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Sub-agent runs kept in this file (sidechains): session id -> (conversation id, new messages)."""
    subagent_run: bool = False
    """The whole file is one sub-agent run (its own conversation is a run, not a session)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    def conversation(self) -> ConversationTouched | None:
        """The file's own conversation (its messages: those of no sidechain run)."""
        if self.session_id is None or self.project_root is None or self.project_id is None:
            return None
        return ConversationTouched(self.project_root, self.project_id, self.session_id, self.conversation_id,
                                   self.messages - sum(new for _cid, new in self.runs.values()), self.subagent_run)

    def touched(self) -> list[ConversationTouched]:
        """The file's own conversation, then its sidechain runs'."""
        own = self.conversation()
        if own is None:
            return []
        return [own, *(ConversationTouched(own.project_root, own.project_id, sid, cid, new, subagent_run=True)
                       for sid, (cid, new) in self.runs.items())]


@dataclass
class ImportReport:
    """The summary of one ``lcm import`` run (sums over ``file_reports``)."""

    dry_run: bool = False
    file_reports: list[FileReport] = field(default_factory=list)

    def _sum(self, name: str) -> int:
        return sum(int(getattr(f, name)) for f in self.file_reports)

    @property
    def files(self) -> int:
        return len(self.file_reports)

    @property
    def records(self) -> int:
        return self._sum("records")

    @property
    def stored(self) -> int:
        return self._sum("stored")

    @property
    def messages(self) -> int:
        return self._sum("messages")

    @property
    def skipped(self) -> int:
        return self._sum("skipped")

    @property
    def bytes_read(self) -> int:
        return self._sum("bytes_read")

    @property
    def quarantined(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for report in self.file_reports:
            total.update(report.quarantined)
        return dict(sorted(total.items()))

    @property
    def redactions(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for report in self.file_reports:
            total.update(report.redactions)
        return dict(sorted(total.items()))

    @property
    def errors(self) -> list[tuple[str, FileError]]:
        return [(f.path, f.error) for f in self.file_reports if f.error is not None]

    @property
    def conversations(self) -> list[ConversationTouched]:
        """Each conversation once (sub-agent runs included), its new messages summed over its files. A file
        whose records hold no message outside its sidechains adds none of its own."""
        merged: dict[tuple[str, str, int | None], ConversationTouched] = {}
        for report in self.file_reports:
            for found in report.touched() if report.status != "skipped" else []:
                if found.conversation_id is None and not found.new_messages:
                    continue
                key = (found.project_id, found.session_id, found.conversation_id)
                seen = merged.get(key)
                merged[key] = found if seen is None else replace(
                    seen, new_messages=seen.new_messages + found.new_messages)
        return list(merged.values())

    @property
    def projects(self) -> list[ProjectFilled]:
        """The projects that received new messages, most first."""
        by_project: dict[str, list[ConversationTouched]] = {}
        for found in self.conversations:
            if found.new_messages:
                by_project.setdefault(found.project_id, []).append(found)
        filled = [ProjectFilled(touched[0].project_root, project_id,
                                len({c.session_id for c in touched if not c.subagent_run}),
                                len({c.session_id for c in touched if c.subagent_run}),
                                sum(c.new_messages for c in touched))
                  for project_id, touched in by_project.items()]
        return sorted(filled, key=lambda p: (-p.new_messages, p.project_root))

    def summary(self) -> dict[str, object]:
        """A JSON-ready summary (what ``lcm import --json`` prints)."""
        statuses = Counter(f.status for f in self.file_reports)
        return {
            "dry_run": self.dry_run,
            "files": self.files,
            "files_by_status": dict(sorted(statuses.items())),
            "bytes": self.bytes_read,
            "records": self.records,
            "stored": self.stored,
            "messages": self.messages,
            "skipped": self.skipped,
            "quarantined": self.quarantined,
            "redactions": self.redactions,
            "errors": [{"path": path, "code": e.code, "message": e.message} for path, e in self.errors],
            "file_list": [
                {"path": f.path, "status": f.status, "format": f.format_id, "session_id": f.session_id,
                 "records": f.records, "stored": f.stored, "skipped": f.skipped, "messages": f.messages,
                 "quarantined": sum(f.quarantined.values()), "error": f.error.code if f.error else None}
                for f in self.file_reports
            ],
            "conversations": [
                {
                    "project_root": c.project_root,
                    "project_id": c.project_id,
                    "session_id": c.session_id,
                    "conversation_id": c.conversation_id,
                    "new_messages": c.new_messages,
                }
                for c in self.conversations
            ],
            "projects": [
                {"project_root": p.project_root, "project_id": p.project_id, "sessions": p.sessions,
                 "subagent_runs": p.subagent_runs, "new_messages": p.new_messages}
                for p in self.projects
            ],
        }


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """Emitted while importing: ``kind`` is ``start`` (totals known), ``bytes`` or ``file_done``."""

    kind: str
    path: Path | None = None
    bytes_done: int = 0
    bytes_total: int = 0
    files_total: int = 0
