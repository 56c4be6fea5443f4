"""The public entry points: ``import_sources`` (``lcm import``) and ``ingest_file`` (the agent hooks)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..scrub.gate import project_scrubber
from ..transcripts.contracts import SubagentFormat, TranscriptFormat
from .context import RunContext, RunOptions
from .discovery import MissingPath, SourceSpec, plan_sources, select_formats
from .engine import import_spec
from .parallel import import_in_workers, worker_count
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
    workers: int | None = None,
    progress: Callable[[ProgressEvent], None] | None = None,
) -> ImportReport:
    """Import transcripts: ``paths`` (files or directories) or, with none, every selected format's
    default client roots. Each session goes to the project of its working directory unless
    ``project`` is given. A failing file is reported and the others still import.

    ``workers`` (default ``import.workers``) spreads a large import over processes,
    a file per process at a time; see ``parallel.worker_count``. ScrubberError, before anything is read,
    when the rule set cannot be built (``scrub.gate``)."""
    formats = app.plugins.formats()
    if provider not in (None, "all") and provider not in providers(app):
        raise ConfigError(f"unknown provider {provider!r} (registered: {', '.join(providers(app)) or 'none'})")
    selected = select_formats(formats, provider)
    project_scrubber(app)  # fails closed (ScrubberError) before any source is read
    options = RunOptions(batch_size=_batch_size(app, batch_size), dry_run=dry_run, project=project,
                         progress=progress, embed_beside=app.plugins.rebuildable)
    plan = plan_sources(formats, selected, paths, app.config.env)
    report = ImportReport(dry_run=dry_run)
    specs = [item for item in plan if isinstance(item, SourceSpec)]
    sizes = [_size(spec.path) for spec in specs]
    if progress is not None:
        progress(ProgressEvent("start", None, 0, sum(sizes), len(plan)))

    def file_done(spec: SourceSpec, file_report: FileReport) -> None:
        if progress is not None:
            progress(ProgressEvent("file_done", spec.path, file_report.bytes_total, file_report.bytes_total))

    processes = worker_count(app, workers, specs, sizes)
    if processes:
        done = iter(import_in_workers(app, options, provider, specs, sizes, processes, file_done))
    else:
        done = _in_process(app, options, selected, specs, file_done)
    for item in plan:
        if isinstance(item, MissingPath):
            report.file_reports.append(FileReport(path=str(item.path), status="failed",
                                                  error=FileError(item.error.code, str(item.error))))
        else:
            report.file_reports.append(next(done))
    return report


def _in_process(app: App, options: RunOptions, selected: Mapping[str, TranscriptFormat],
                specs: Sequence[SourceSpec], file_done: Callable[[SourceSpec, FileReport], None]
                ) -> Iterator[FileReport]:
    ctx = RunContext(app, options, selected)
    try:
        for spec in specs:
            file_report = import_spec(ctx, spec, explicit=spec.named)
            file_done(spec, file_report)
            yield file_report
    finally:
        ctx.close()


def ingest_file(app: App, path: Path, *, format_id: str | None = None, project: Path | None = None) -> FileReport:
    """Import what is new in one transcript file (resumes from its checkpoint); never raises for a
    per-file failure: see ``FileReport.error``."""
    return ingest_session(app, path, format_id=format_id, project=project, companions=False)[0]


def ingest_session(app: App, path: Path, *, format_id: str | None = None, project: Path | None = None,
                   extra: Sequence[Path] = (), companions: bool = True) -> list[FileReport]:
    """What the hooks import: the session file ``path``, then (``companions``) the sub-agent files that
    belong to it (those each format with sub-agent files lists for it, read in that format) and ``extra``
    (such as the file a SubagentStop names), each once, in one run (the project is opened once).
    One report per file, the session's first; like ``ingest_file`` it never raises for a per-file failure."""
    formats = app.plugins.formats()
    if format_id is not None and format_id not in formats:
        raise ConfigError(f"unknown transcript format {format_id!r}")
    project_scrubber(app)  # fails closed (ScrubberError): a hook's event stays in the outbox
    files = {Path(path): format_id}
    if companions:
        files.update((p, fid) for fid, fmt in formats.items() if isinstance(fmt, SubagentFormat)
                     for p in fmt.companions(Path(path)) if p not in files)
        files.update((Path(p), None) for p in extra if Path(p) not in files)
    ctx = RunContext(app, RunOptions(batch_size=_batch_size(app, None), project=project), formats)
    try:
        return [_ingest_one(ctx, formats, file, fid) for file, fid in files.items()]
    finally:
        ctx.close()


def _ingest_one(ctx: RunContext, formats: Mapping[str, TranscriptFormat], path: Path,
                format_id: str | None) -> FileReport:
    if path.is_dir():
        return FileReport(path=str(path), status="failed", error=FileError("not_a_file", "not a file"))
    item = plan_sources(formats, formats, [path], ctx.app.config.env)[0]
    if isinstance(item, MissingPath):
        return FileReport(path=str(path), status="failed", error=FileError(item.error.code, str(item.error)))
    return import_spec(ctx, item, format_id=format_id, explicit=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
