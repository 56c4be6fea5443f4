"""Which project storages a recall call reads, and which conversations a session names."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from .refs import RecallNotFoundError, SessionNotFoundError

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Conversation


@contextmanager
def project_scopes(app: App, all_projects: bool) -> Iterator[list[ProjectStorage]]:
    """The current project, or every project under ``$LCM_HOME`` (opened for the block)."""
    if not all_projects:
        with app.project() as storage:
            yield [storage]
        return
    with ExitStack() as stack:
        scopes = []
        for ref in app.storage.list_projects():
            storage = app.storage.open_project(ref)
            stack.callback(storage.close)
            scopes.append(storage)
        yield scopes


def resolve_session(storage: ProjectStorage, session: str) -> list[Conversation]:
    """Conversation segments of ``session`` (exact id, else a unique prefix), oldest first."""
    found = storage.conversations.find_conversations(session)
    if found:
        return found
    matches = sorted(
        {c.session_id for c in storage.conversations.list_conversations() if c.session_id.startswith(session)}
    )
    if len(matches) == 1:
        return storage.conversations.find_conversations(matches[0])
    if len(matches) > 1:
        raise RecallNotFoundError(
            f"session prefix {session!r} is ambiguous: {', '.join(matches[:5])}{' ...' if len(matches) > 5 else ''}"
        )
    raise SessionNotFoundError(f"no session {session!r} in this project (`lcm grep` or `lcm search` list sessions)")
