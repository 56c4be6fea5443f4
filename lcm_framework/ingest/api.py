"""The public entry points: ``import_sources`` (``lcm import``) and ``ingest_file`` (the agent hooks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .context import RunContext, RunOptions
from .discovery import MissingPath, SourceSpec, plan_sources, select_formats
from .engine import import_spec
from .report import FileError, FileReport, ImportReport, ProgressEvent

if TYPE_CHECKING:
    from ..app import App


def _batch_size(app: App, batch_size: int | None) -> int:
    size = int(app.config.get("import.batch_size")) if batch_size is None else batch_size
    if isinstance(size, bool) or not 1 <= size <= 1000:
        raise ConfigError(f"batch size must be between 1 and 1000, got {size}")
    return size


def providers(app: App) -> list[str]:
    """Provider names of the registered formats (for ``--provider``)."""
    return sorted({fmt.provider for fmt in app.plugins.formats().values()})


def import_sources(
    app: App,
    paths: Sequence[Path] | None = None,
    *,
    provider: str | None = None,
    project: Path | None = None,
    dry_run: bool = False,
    batch_size: int | None = None,
    progress: Callable[[ProgressEvent], None] | None = None,
) -> ImportReport:
    """Import transcripts: ``paths`` (files or directories) or, with none, every selected format's
    default client roots. Each session goes to the project of its working directory unless
    ``project`` is given. A failing file is reported and the others still import."""
    formats = app.plugins.formats()
    if provider not in (None, "all") and provider not in providers(app):
        raise ConfigError(f"unknown provider {provider!r} (registered: {', '.join(providers(app)) or 'none'})")
    selected = select_formats(formats, provider)
    options = RunOptions(batch_size=_batch_size(app, batch_size), dry_run=dry_run, project=project,
                         progress=progress)
    plan = plan_sources(formats, selected, paths, app.config.env)
    report = ImportReport(dry_run=dry_run)
    if progress is not None:
        total = sum(_size(item.path) for item in plan if isinstance(item, SourceSpec))
        progress(ProgressEvent("start", None, 0, total, len(plan)))
    ctx = RunContext(app, options, selected)
    try:
        for item in plan:
            if isinstance(item, MissingPath):
                failed = FileReport(path=str(item.path), status="failed",
                                    error=FileError(item.error.code, str(item.error)))
                report.file_reports.append(failed)
                continue
            file_report = import_spec(ctx, item, explicit=item.named)
            report.file_reports.append(file_report)
            if progress is not None:
                progress(ProgressEvent("file_done", item.path, file_report.bytes_total, file_report.bytes_total))
    finally:
        ctx.close()
    return report


def ingest_file(app: App, path: Path, *, format_id: str | None = None, project: Path | None = None) -> FileReport:
    """Import what is new in one transcript file (resumes from its checkpoint); never raises for a
    per-file failure: see ``FileReport.error``."""
    formats = app.plugins.formats()
    if format_id is not None and format_id not in formats:
        raise ConfigError(f"unknown transcript format {format_id!r}")
    if Path(path).is_dir():
        return FileReport(path=str(path), status="failed", error=FileError("not_a_file", "not a file"))
    item = plan_sources(formats, formats, [path], app.config.env)[0]
    if isinstance(item, MissingPath):
        return FileReport(path=str(path), status="failed", error=FileError(item.error.code, str(item.error)))
    ctx = RunContext(app, RunOptions(batch_size=_batch_size(app, None), project=project), formats)
    try:
        return import_spec(ctx, item, format_id=format_id, explicit=True)
    finally:
        ctx.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
