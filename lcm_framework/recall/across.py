"""Recall over the current project or every project under ``$LCM_HOME``.

The one per-project loop behind ``lcm grep/search/describe/expand``, the
MCP tools and the daemon routes, so all three answer alike and fail with
the same typed errors (unknown session or id: ``RecallNotFoundError``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from ..storage.models import SearchMode
from .grep import GrepResult, Scope, best_first, grep
from .refs import RecallNotFoundError, Ref, SessionNotFoundError
from .scope import project_scopes, resolve_session
from .search import KIND_ORDER, Ranked, numbered, search, within_cap
from .semantic import lane

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage

T = TypeVar("T")


def grep_all(
    app: App,
    pattern: str,
    *,
    all_projects: bool = False,
    session: str | None = None,
    mode: SearchMode = SearchMode.FULL_TEXT,
    scope: Scope = Scope.BOTH,
    since: datetime | None = None,
    limit: int | None = 50,
    include_subagents: bool = True,
) -> list[GrepResult]:
    """One result per searched project; with ``session``, only projects holding it (else an error). The current
    project has a result (empty) even when nothing is stored for it yet."""
    results = []
    with project_scopes(app, all_projects) as scopes:
        if not scopes and not all_projects:
            if session:
                raise SessionNotFoundError(f"no session {session!r} in this project")
            return [GrepResult(app.project_ref().project_id, pattern, mode, scope)]
        for storage in scopes:
            cids = None
            if session:
                try:
                    cids = [c.conversation_id for c in resolve_session(storage, session)]
                except SessionNotFoundError:
                    if not all_projects:
                        raise
                    continue
            results.append(grep(storage, pattern, mode=mode, scope=scope, conversation_ids=cids, since=since,
                                limit=limit, include_subagents=include_subagents))
    if session and not results:
        raise SessionNotFoundError(f"no session {session!r} in any project under $LCM_HOME")
    return results


def search_all(app: App, query: str, *, all_projects: bool = False, limit: int = 20,
               include_subagents: bool = True, context: int = 1) -> list[Ranked]:
    """The best ``limit`` matches of all searched projects, ranked together by relevance (rank 1 first),
    within the list's character cap."""
    ranked: list[Ranked] = []
    embedder = lane(app.config, app.plugins)
    with project_scopes(app, all_projects) as scopes:
        for storage in scopes:
            ranked.extend(search(storage, query, limit=limit, include_subagents=include_subagents, context=context,
                                 embedder=embedder))
    ranked.sort(key=lambda r: (-r.hit.score, KIND_ORDER[r.hit.kind], *best_first(r.hit)[1:]))
    return numbered(within_cap(ranked[:limit]))


def find_all(app: App, ref: Ref, lookup: Callable[[ProjectStorage, Ref], T | None], *,
             all_projects: bool = False) -> list[T]:
    """``lookup`` of ``ref`` in every searched project that holds it; none at all is an error."""
    found = []
    with project_scopes(app, all_projects) as scopes:
        for storage in scopes:
            item = lookup(storage, ref)
            if item is not None:
                found.append(item)
    if not found:
        where = ("any project under $LCM_HOME" if all_projects
                 else "this project (try all projects: --all-projects, or all_projects=true)")
        raise RecallNotFoundError(f"{ref.text} is not in {where}")
    return found
