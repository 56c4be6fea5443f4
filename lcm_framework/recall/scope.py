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
    """The current project, or every project under ``$LCM_HOME`` (opened for the block). The current project
    is not created when nothing is stored for it yet: the list is then empty."""
    if not all_projects:
        with app.existing_project() as storage:
            yield [] if storage is None else [storage]
        return
    with ExitStack() as stack:
        scopes = []
        for ref in app.storage.list_projects():
            storage = app.storage.open_project(ref)
            stack.callback(storage.close)
            scopes.append(storage)
        yield scopes


def resolve_session(storage: ProjectStorage, session: str) -> list[Conversation]:
    """Conversation segments of ``session`` (exact id, else a unique prefix), oldest first.

    A prefix matching a main session and the sub-agent runs it started (whose ids extend the session's)
    names the main session; it is ambiguous only when it matches several main sessions (or only runs)."""
    found = storage.conversations.find_conversations(session)
    if found:
        return found
    conversations = [c for c in storage.conversations.list_conversations() if c.session_id.startswith(session)]
    matches = {c.session_id for c in conversations}
    if len(matches) > 1:
        runs = {link.child_conversation_id for link in storage.conversations.list_subagent_links()}
        matches = {c.session_id for c in conversations if c.conversation_id not in runs} or matches
    if len(matches) == 1:
        return storage.conversations.find_conversations(matches.pop())
    if matches:
        listed = sorted(matches)
        raise RecallNotFoundError(
            f"session prefix {session!r} is ambiguous: {', '.join(listed[:5])}{' ...' if len(listed) > 5 else ''}"
        )
    raise SessionNotFoundError(f"no session {session!r} in this project (`lcm sessions` lists them)")
