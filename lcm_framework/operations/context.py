"""The context verb: what LCM would give the model for a session, under a token budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .base import Result

if TYPE_CHECKING:
    from ..app import App
    from ..assembly import AssembledContext
    from ..storage.contracts import ProjectStorage


@dataclass(frozen=True, slots=True)
class ContextRequest:
    session: str
    """A session id or a unique prefix; its newest segment is assembled."""
    budget: int | None = None
    """Token budget (None: ``compaction.context_budget_tokens``)."""
    all_projects: bool = False
    """Use the first project under ``$LCM_HOME`` holding the session."""


@dataclass(frozen=True, slots=True)
class Context(Result):
    session_id: str
    assembled: AssembledContext

    def to_json(self) -> dict[str, Any]:
        """``{"session_id", "conversation_id", "budget", "token_estimate", ..., "messages"}``."""
        return {"session_id": self.session_id, **self.assembled.as_json()}


def context(app: App, request: ContextRequest, *, storage: ProjectStorage | None = None) -> Context:
    """The assembled context of the session's newest segment (``assembly.assemble_context``), looked up in
    ``storage`` when given (a scope the caller keeps open), else in this project (or every project). An unknown
    session is a ``SessionNotFoundError``."""
    from ..recall import SessionNotFoundError, project_scopes

    if storage is not None:
        return _assembled(app, storage, request)
    with project_scopes(app, request.all_projects) as scopes:
        for scope in scopes:  # the first project holding the session
            try:
                return _assembled(app, scope, request)
            except SessionNotFoundError:
                if not request.all_projects:
                    raise
    where = "any project under $LCM_HOME" if request.all_projects else "this project"
    raise SessionNotFoundError(f"no session {request.session!r} in {where}")


def _assembled(app: App, storage: ProjectStorage, request: ContextRequest) -> Context:
    from ..assembly import assemble_context
    from ..recall import resolve_session

    conversation = resolve_session(storage, request.session)[-1]
    return Context(conversation.session_id,
                   assemble_context(app, storage, conversation.conversation_id, budget_tokens=request.budget))
