"""SessionStart without a daemon: read the restored context straight from storage (read-only).

Only the configured storage driver is loaded (no plugin manager), so the
agent still gets its context when the daemon is down; the event itself is
also kept in the outbox so reconciliation runs when the daemon is back.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def restored_context(project: Path, session_id: str | None, env: Mapping[str, str] | None = None,
                     source: str | None = None) -> str:
    from ..config import load_config
    from ..daemon.operations import restore
    from ..paths import project_id_for
    from ..storage.models import ProjectRef
    from ..storage.selection import open_backend

    config = load_config(project=project, env=env)
    factory = open_backend(config)
    try:
        storage = factory.open_project(ProjectRef(project_id_for(project), str(project)))
        try:
            return str(restore(storage, session_id, max_tokens=4000, limit=12, source=source)["context"])
        finally:
            storage.close()
    finally:
        factory.close()
