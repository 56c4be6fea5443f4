"""What a command that found nothing in the current project tells the user: which projects do hold data.

``lcm import`` stores each session in the project of the directory it ran in, so a search run from
anywhere else finds nothing; the hint names the projects that hold messages and how to reach them.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..output import terminal_safe

if TYPE_CHECKING:
    from ..app import App

SHOWN = 3
"""How many projects the hint names (most messages first)."""


@dataclass(frozen=True, slots=True)
class ProjectData:
    root: str
    project_id: str
    sessions: int
    """Conversations that are not sub-agent runs."""
    messages: int


def projects_with_data(app: App) -> list[ProjectData]:
    """Every project under ``$LCM_HOME`` holding messages, most messages first (opened read-only)."""
    found = []
    for ref in app.storage.list_projects():
        storage = app.storage.open_existing_project(ref)
        if storage is None:
            continue
        try:
            stats = storage.stats()
        finally:
            storage.close()
        if stats.messages:
            found.append(ProjectData(ref.root, ref.project_id, stats.conversations - stats.subagent_conversations,
                                     stats.messages))
    return sorted(found, key=lambda p: (-p.messages, p.root))


def where_data_is(app: App) -> str | None:
    """``nothing found in this project (ROOT); data is in: ...; reach it with ...`` (or how to import when no
    project holds data), safe to print on a terminal; ``None`` when only this project holds data."""
    current = app.project_ref()
    holding = projects_with_data(app)
    others = [p for p in holding if p.project_id != current.project_id]
    here = f"nothing found in this project ({current.root})"
    if not others:
        if holding:
            return None
        return terminal_safe(f"{here}; no project under $LCM_HOME holds data yet: `lcm import` imports your "
                             "agents' sessions")
    listed = "; ".join(f"{p.root} ({p.sessions} sessions, {p.messages} messages)" for p in others[:SHOWN])
    more = f"; {len(others) - SHOWN} more (`lcm stats`)" if len(others) > SHOWN else ""
    where = "other projects hold data" if len(holding) > len(others) else "data is in"
    return terminal_safe(f"{here}; {where}: {listed}{more}. Reach it with --all-projects, or "
                         f"`lcm --project {shlex.quote(others[0].root)} COMMAND`")


def print_where_data_is(app: App, *, all_projects: bool) -> None:
    """On stderr (stdout may be JSON), after what is on stdout, unless every project was searched already."""
    hint = None if all_projects else where_data_is(app)
    if hint is not None:
        sys.stdout.flush()
        print(f"hint: {hint}", file=sys.stderr)


@contextmanager
def hint_when_session_missing(app: App, *, all_projects: bool) -> Iterator[None]:
    """A ``SessionNotFoundError`` of the block, raised again with the hint in its message."""
    from ..recall import SessionNotFoundError

    try:
        yield
    except SessionNotFoundError as exc:
        hint = None if all_projects else where_data_is(app)
        if hint is None:
            raise
        raise SessionNotFoundError(f"{exc}\nhint: {hint}") from None
