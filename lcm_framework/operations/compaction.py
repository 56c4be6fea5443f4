"""Compaction verbs: compact (then promote what it summarized) and promote."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .base import Result

if TYPE_CHECKING:
    from ..app import App
    from ..compaction.settings import CompactionReport
    from ..memory.promote import PromotionReport
    from ..storage.contracts import ProjectStorage


@dataclass(frozen=True, slots=True)
class CompactRequest:
    session: str | None = None
    """One session (its id or a unique prefix), else every conversation."""
    mode: str = "full"
    """``full`` (a sweep) or ``incremental`` (what the hooks ask after a turn)."""
    budget: int | None = None
    """Compact oldest first until each context is under this many tokens, then stop (overrides ``mode``)."""
    dry_run: bool = False
    all_projects: bool = False


@dataclass(frozen=True, slots=True)
class Compacted(Result):
    """One report per conversation, grouped by project, and the promotion of each project's new summaries."""

    request: CompactRequest
    by_project: tuple[tuple[str, tuple[CompactionReport, ...]], ...]
    promotions: tuple[PromotionReport, ...]
    fallback: str | None = None
    """Why the summarizer fell back to the offline one, when it did."""

    @property
    def reports(self) -> list[CompactionReport]:
        return [r for _, reports in self.by_project for r in reports]

    def to_json(self) -> dict[str, Any]:
        """``{"dry_run", "conversations", "promotion"}``; with ``all_projects``
        ``{"dry_run", "projects": [{"project_id", "conversations"}], "promotions"}``."""
        from ..jsonable import to_jsonable

        if self.request.all_projects:
            return to_jsonable({"dry_run": self.request.dry_run, "projects": [
                {"project_id": pid, "conversations": list(rs)} for pid, rs in self.by_project],
                "promotions": list(self.promotions)})
        return to_jsonable({"dry_run": self.request.dry_run, "conversations": self.reports,
                            "promotion": self.promotions[0] if self.promotions else None})


def compact(app: App, request: CompactRequest, *, storage: ProjectStorage | None = None,
            notify: Callable[[str], None] | None = None) -> Compacted:
    """Compact the session (or every conversation) in ``storage`` when given, else in this project (or every
    project), then promote the summaries it created (``memory.promote_after_compaction``). ``notify`` hears
    what the summarizer says before it starts (the offline ones say so). An unknown session is a
    ``SessionNotFoundError``; a project nothing is stored for gives no reports (compaction creates none)."""
    from datetime import UTC, datetime

    from ..compaction import CompactionEngine, Mode
    from ..recall import SessionNotFoundError, project_scopes

    engine = CompactionEngine(app)
    notice = None if request.dry_run else getattr(engine.summarizer, "notice", None)
    if notice and notify is not None:
        notify(notice)
    mode = Mode.UNTIL_UNDER if request.budget else Mode(request.mode)
    started = datetime.now(UTC)
    by_project: list[tuple[str, tuple[CompactionReport, ...]]] = []
    promotions: list[PromotionReport] = []

    def run(scope: ProjectStorage) -> None:
        from ..memory.promote import after_compaction
        from ..recall import resolve_session

        conversations = (resolve_session(scope, request.session) if request.session
                         else scope.conversations.list_conversations())
        reports = tuple(engine.compact(scope, c.conversation_id, mode, budget=request.budget,
                                       dry_run=request.dry_run) for c in conversations)
        by_project.append((scope.project_id, reports))
        promoted = after_compaction(app, scope, reports, started)
        if promoted is not None:
            promotions.append(promoted)

    if storage is not None:
        run(storage)
    else:
        with project_scopes(app, request.all_projects) as scopes:
            if request.session and not scopes and not request.all_projects:
                raise SessionNotFoundError(f"no session {request.session!r} in this project")
            for scope in scopes:
                try:
                    run(scope)
                except SessionNotFoundError:
                    if not request.all_projects:
                        raise
        if request.session and not by_project:
            raise SessionNotFoundError(f"no session {request.session!r} in any project under $LCM_HOME")
    return Compacted(request, tuple(by_project), tuple(promotions), engine.fallback_reason)


@dataclass(frozen=True, slots=True)
class PromoteRequest:
    all_projects: bool = False


@dataclass(frozen=True, slots=True)
class Promoted(Result):
    """Each project's promotion report."""

    request: PromoteRequest
    by_project: tuple[tuple[str, PromotionReport], ...]

    def to_json(self) -> list[dict[str, Any]]:
        """``[{"project_id", "summaries", "created", "reinforced", ...}]``, one per project."""
        from ..jsonable import to_jsonable

        return [{"project_id": pid, **to_jsonable(report)} for pid, report in self.by_project]


def promote(app: App, request: PromoteRequest) -> Promoted:
    """Durable insights of every leaf summary turned into memories now (``memory.promote``); again: no change."""
    from ..memory.promote import promote_project
    from ..recall import project_scopes

    with project_scopes(app, request.all_projects) as scopes:
        return Promoted(request, tuple((s.project_id, promote_project(app, s)) for s in scopes))
