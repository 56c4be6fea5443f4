"""The synchronous operations behind the daemon routes (run in worker threads).

Each takes the per-project ``App`` and delegates to the same core functions
the CLI uses: transcript ingest (``lcm_framework.ingest``), compaction and
assembly (``lcm_framework.compaction`` / ``lcm_framework.assembly``) and the
recall capabilities registered by plugins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..assembly.restore import restore, session_conversation
from ..errors import StorageUnavailableError
from ..jsonable import to_jsonable

if TYPE_CHECKING:
    from ..app import App
    from ..ingest import FileReport
    from ..kernel.extensions import Capability
    from ..operations import MemoryRequest
    from ..storage.contracts import ProjectStorage

__all__ = ["capability", "compact", "context", "ingest", "memory", "restore", "session_conversation"]

PERMANENT_INGEST_ERRORS = frozenset({"not_found", "not_a_file", "not_regular", "unknown_format", "source_refused",
                                     "message_mismatch"})


def ingest(app: App, path: Path, *, format_id: str | None = None, extra: Sequence[Path] = ()) -> dict[str, Any]:
    """Import what ``path`` holds that storage lacks (idempotent, resumable) into the app's project, then
    its sub-agent files (``ingest_session``: those its format lists for it, and ``extra``).

    A failed file raises: ``IngestError`` for what a retry cannot fix (missing
    file, unknown format, mismatch), ``StorageUnavailableError`` otherwise so
    the hook keeps the event in the outbox and the daemon retries it. A sub-agent
    file that cannot be fixed by a retry is reported in ``subagent_files`` only.
    """
    from ..ingest import ingest_session

    report, *runs = ingest_session(app, path, format_id=format_id, project=app.config.project_root, extra=extra)
    _checked(app, report)
    for run in runs:
        if run.error is not None and run.error.code not in PERMANENT_INGEST_ERRORS:
            _checked(app, run)
    result = dict(to_jsonable(report))
    if runs:
        result["subagent_files"] = to_jsonable(runs)
    return result


def _checked(app: App, report: FileReport) -> FileReport:
    from ..ingest import IngestError

    if report.error is not None:
        if report.error.code in PERMANENT_INGEST_ERRORS:
            raise IngestError(report.error.message, code=report.error.code)
        raise StorageUnavailableError(
            f"ingest failed, will be retried: {report.error.message}", backend=str(
                app.config.get("storage.backend")), domain="ingest", code=report.error.code,
        )
    return report


def compact(app: App, session_id: str | None, *, mode: str) -> dict[str, Any]:
    """``operations.compact`` (what ``lcm compact --json`` prints) of one session (``incremental`` or ``full``),
    or of every conversation when ``session_id`` is None; a project nothing is stored for raises
    ``no_such_project`` (compaction never creates one)."""
    from ..operations import CompactRequest
    from ..operations import compact as compacted
    from .projects import no_such_project

    storage = app.storage.open_existing_project(app.project_ref())
    if storage is None:
        raise no_such_project(app)
    with closing(storage):
        return compacted(app, CompactRequest(session=session_id, mode=mode), storage=storage).to_json()


def context(storage: ProjectStorage, app: App, session_id: str, *, budget_tokens: int | None) -> dict[str, Any]:
    """``operations.context`` (what ``lcm context --json`` prints) on the daemon's kept read scope."""
    from ..operations import ContextRequest
    from ..operations import context as assembled

    return assembled(app, ContextRequest(session_id, budget=budget_tokens), storage=storage).to_json()


def memory(app: App, request: MemoryRequest) -> dict[str, Any]:
    """``operations.memory`` (what ``lcm memory ACTION --json`` prints)."""
    from ..operations import memory as done

    return done(app, request).to_json()


def capability(app: App, found: Capability, args: Mapping[str, Any]) -> Any:
    """Run a registered capability with its arguments checked and completed (``capabilities.call``)."""
    from ..kernel.arguments import call

    return to_jsonable(call(app, found, args))
