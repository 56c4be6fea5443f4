"""Verbs that move data in and out: import transcripts, export portable records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .base import Result

if TYPE_CHECKING:
    from ..app import App
    from ..ingest import ImportReport, ProgressEvent


@dataclass(frozen=True, slots=True)
class ImportRequest:
    paths: tuple[Path, ...] = ()
    """Transcript files or directories; none: every format's sessions directories."""
    provider: str = "all"
    project: Path | None = None
    """Store every session in this project instead of its working directory's."""
    dry_run: bool = False
    batch_size: int | None = None
    workers: int | None = None


@dataclass(frozen=True, slots=True)
class Imported(Result):
    report: ImportReport

    @property
    def failed(self) -> bool:
        return bool(self.report.errors)

    def to_json(self) -> dict[str, Any]:
        """Files by status, messages, quarantined and redaction counts, errors (``ImportReport.summary``)."""
        return self.report.summary()


def import_transcripts(app: App, request: ImportRequest, *,
                       progress: Callable[[ProgressEvent], None] | None = None) -> Imported:
    """What the transcripts hold that storage lacks, imported (idempotent, resumable, scrubbed first)."""
    from ..ingest import import_sources

    return Imported(import_sources(app, list(request.paths) or None, provider=request.provider,
                                   project=request.project, dry_run=request.dry_run,
                                   batch_size=request.batch_size, workers=request.workers, progress=progress))


@dataclass(frozen=True, slots=True)
class ExportRequest:
    all_projects: bool = False
    memories_only: bool = False


@dataclass(frozen=True, slots=True)
class Exported(Result):
    records: int


def export_records(app: App, request: ExportRequest, out: TextIO) -> Exported:
    """This project's (or every project's) records as portable JSON Lines written to ``out``."""
    from ..portable.export import write_stream

    return Exported(write_stream(app, out, all_projects=request.all_projects, memories_only=request.memories_only))
