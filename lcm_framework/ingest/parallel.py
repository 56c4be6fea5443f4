"""Large backfills in several processes: each worker imports whole files with its own App.

Every file is an independent source (its own checkpoint, ingest keys and
transaction per batch), so files can go to different processes and the
result is the same database a single process writes; only surrogate ids
(conversation, message, record numbers) may be assigned in another order.
The parent hands out files, biggest first, collects reports and progress,
and imports the smallest files itself whenever no worker needs it. Workers
are started as new interpreters (never forked: no SQLite connection or thread
crosses a fork), build their App from the parent's configuration, and die
with the parent (``kill -9`` of an import leaves no orphan writing). A file a
worker did not finish because it died is imported again by the others, which
converges like any interrupted import.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..child_process import Child
from ..errors import ConfigError
from .context import RunContext, RunOptions
from .discovery import SourceSpec, select_formats
from .engine import import_spec
from .report import FileReport, ProgressEvent

if TYPE_CHECKING:
    from ..app import App

AUTO_MIN_BYTES = 8 * 1024 * 1024
"""Below this many bytes ``import.workers = 0`` (auto) imports in-process: spawning costs ~0.2 s."""
MAX_AUTO_WORKERS = 8
MAX_WORKERS = 64
QUEUED_PER_WORKER = 2
"""Files assigned to a worker at once (one running, one waiting), so it never idles between files."""

Task = tuple[int, SourceSpec]


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to rebuild the parent's App and run options."""

    project_root: Path
    env: dict[str, str]
    flags: dict[str, Any]
    provider: str | None
    options: RunOptions
    forward_progress: bool
    parent_pid: int


def worker_count(app: App, requested: int | None, specs: Sequence[SourceSpec], sizes: Sequence[int]) -> int:
    """Processes that import in this run, this one included; 0 imports in-process only.

    ``requested`` (``--workers`` or ``import.workers``): 1 means in-process, 0 means
    auto (one per CPU, at most ``MAX_AUTO_WORKERS``, and only for ``AUTO_MIN_BYTES``
    or more). Never more processes than files; never workers when a plugin was
    registered in-process (another process could not load it).
    """
    wanted = int(app.config.get("import.workers")) if requested is None else requested
    if isinstance(wanted, bool) or not 0 <= wanted <= MAX_WORKERS:
        raise ConfigError(f"workers must be between 0 and {MAX_WORKERS}, got {wanted}")
    if wanted == 0:
        if sum(sizes) < AUTO_MIN_BYTES:
            return 0
        wanted = min(os.cpu_count() or 1, MAX_AUTO_WORKERS)
    count = min(wanted, len(specs))
    if count < 2 or not app.plugins.rebuildable:
        return 0
    return count


def import_in_workers(app: App, options: RunOptions, provider: str | None, specs: Sequence[SourceSpec],
                      sizes: Sequence[int], processes: int,
                      on_report: Callable[[SourceSpec, FileReport], None]) -> list[FileReport]:
    """Import ``specs`` in ``processes`` processes, this one included; the reports come back in the order
    of ``specs``, and ``on_report`` sees each one as it arrives."""
    config = app.config
    setup = WorkerSetup(
        project_root=config.project_root,
        env=dict(config.env),
        flags=config.flags,
        provider=provider,
        options=replace(options, progress=None),
        forward_progress=options.progress is not None,
        parent_pid=os.getpid(),
    )
    order = sorted(range(len(specs)), key=lambda i: -sizes[i])
    ctx = RunContext(app, options, select_formats(app.plugins.formats(), provider))

    def here(task: Task) -> FileReport:
        report = import_spec(ctx, task[1], explicit=task[1].named)
        on_report(task[1], report)
        return report

    try:
        pool = _Pool(setup, processes - 1, options.progress, lambda task, report: on_report(task[1], report))
        return pool.run([(i, specs[i]) for i in order], len(specs), here)
    finally:
        ctx.close()


class _Worker(Child):
    """One worker process and the files it was sent (``python -m lcm_framework.ingest.worker``)."""

    def __init__(self, setup: WorkerSetup) -> None:
        super().__init__("lcm_framework.ingest.worker")
        self.tasks: list[Task] = []
        self.alive = self.send(setup)

    def fill(self, pending: list[Task]) -> None:
        while self.alive and pending and len(self.tasks) < QUEUED_PER_WORKER:
            self.tasks.append(pending.pop())
            self.alive = self.send(self.tasks[-1])

    def finish(self, task_index: int) -> Task:
        task = next(t for t in self.tasks if t[0] == task_index)
        self.tasks.remove(task)
        return task


class _Pool:
    def __init__(self, setup: WorkerSetup, workers: int, progress: Callable[[ProgressEvent], None] | None,
                 on_report: Callable[[Task, FileReport], None]) -> None:
        self.setup = setup
        self.size = workers
        self.progress = progress
        self.on_report = on_report

    def run(self, tasks: list[Task], total: int, here: Callable[[Task], FileReport]) -> list[FileReport]:
        """Hand out ``tasks``, biggest first, and gather every report. This process imports too, the
        smallest files (so it is never away from handing out work for long), whenever no worker
        message waits; it also imports the files of a worker that died."""
        from multiprocessing.connection import wait

        pending = list(reversed(tasks))  # pop() hands out the biggest file, pop(0) the smallest
        reports: dict[int, FileReport] = {}
        running: dict[Any, _Worker] = {}
        try:
            for _ in range(self.size):
                try:
                    worker = _Worker(self.setup)
                except OSError:  # cannot start another process (limits): the others, or this one, go on
                    break
                running[worker.inbox] = worker
                worker.fill(pending)
            while running or pending:
                ready = wait(list(running), timeout=0 if pending else None) if running else []
                if not ready:
                    task = pending.pop(0)
                    reports[task[0]] = here(task)
                    continue
                for inbox in ready:
                    worker = running[inbox]
                    try:
                        message = worker.inbox.recv()
                    except (EOFError, OSError):  # the worker died: its unfinished files are redone here
                        pending += worker.tasks
                        del running[inbox]
                        worker.close(kill=True)
                        continue
                    if message[0] == "progress":
                        if self.progress is not None:
                            self.progress(message[1])
                        continue
                    _kind, index, report = message
                    reports[index] = report
                    self.on_report(worker.finish(index), report)
                    worker.fill(pending)
                    if not worker.tasks:
                        del running[inbox]
                        worker.close()
        finally:
            for worker in running.values():  # interrupted: stop the workers (an open batch rolls back)
                worker.close(kill=True)
        return [reports[i] for i in range(total)]
