"""The sessions verb: the stored sessions of this project (or every project) with their sub-agent runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Result

if TYPE_CHECKING:
    from ..app import App
    from ..recall.sessions import SessionInfo


@dataclass(frozen=True, slots=True)
class SessionsRequest:
    all_projects: bool = False


@dataclass(frozen=True, slots=True)
class Sessions(Result):
    sessions: list[SessionInfo]
    """Most recently active first; a sub-agent run names the session that started it (``subagent_of``)."""


def sessions(app: App, request: SessionsRequest) -> Sessions:
    from ..recall.sessions import sessions_across

    return Sessions(sessions_across(app, all_projects=request.all_projects))
