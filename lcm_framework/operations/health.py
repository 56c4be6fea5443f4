"""Health verbs: stats (per-project counts), status (one screen of the installation), doctor (every check)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Result

if TYPE_CHECKING:
    from ..app import App
    from ..diagnostics import Check


@dataclass(frozen=True, slots=True)
class StatsRequest:
    project: str | None = None
    """Only the project with this root (resolved), else every stored project."""


@dataclass(frozen=True, slots=True)
class Stats(Result):
    projects: list[dict[str, Any]]
    """Per project: root, conversations, messages, summaries by depth, compression ratio, bytes, redactions."""


def stats(app: App, request: StatsRequest) -> Stats:
    from ..diagnostics import project_stats

    rows = project_stats(app)
    return Stats([r for r in rows if request.project is None or r["root"] == request.project])


@dataclass(frozen=True, slots=True)
class StatusRequest:
    pass


@dataclass(frozen=True, slots=True)
class Status(Result):
    snapshot: dict[str, Any]
    """daemon, backend, projects, current_project, outbox, sync, integrity (``diagnostics.status_snapshot``)."""

    def to_json(self) -> dict[str, Any]:
        return self.snapshot


def status(app: App, request: StatusRequest) -> Status:
    from ..diagnostics import status_snapshot

    return Status(status_snapshot(app))


@dataclass(frozen=True, slots=True)
class DoctorRequest:
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    """The environment the checks read (credentials: presence only)."""


@dataclass(frozen=True, slots=True)
class Diagnosis(Result):
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return not any(c.failed for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        """``{"ok", "checks": [{"name", "status", "detail", "fix", "data"}]}``."""
        from ..jsonable import to_jsonable

        return {"ok": self.ok, "checks": to_jsonable(self.checks)}


def doctor(app: App, request: DoctorRequest) -> Diagnosis:
    """Every check of the installation (``diagnostics.run_checks``), each failure naming its fix."""
    from ..diagnostics import run_checks

    return Diagnosis(run_checks(app, dict(request.env)))
