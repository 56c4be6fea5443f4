"""SessionStart without a daemon: read the restored context straight from storage (read-only).

The plugins are loaded (cheap: each imports its heavy parts on use) and only
the configured storage driver is opened, so the agent still gets its context
when the daemon is down; a project nothing is stored for is not created. The event itself is
also kept in the outbox so reconciliation runs when the daemon is back.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def restored_context(project: Path, session_id: str | None, env: Mapping[str, str] | None = None,
                     source: str | None = None) -> str:
    from ..assembly.restore import SESSION_START_SUMMARIES, SESSION_START_TOKENS, restore
    from ..config import load_config
    from ..kernel.plugins import build_plugins
    from ..memory.hints import session_memories
    from ..memory.scope import USER_WIDE_DIR, MemoryScope
    from ..paths import project_id_for
    from ..recall.semantic import lane_or_none
    from ..storage.models import ProjectRef
    from ..storage.selection import open_backend

    plugins = build_plugins(env)
    config = load_config(project=project, env=env, plugins=plugins)
    factory = open_backend(config, plugins=plugins)
    try:
        user_root = (Path(config.home) / USER_WIDE_DIR).resolve()
        storage = factory.open_existing_project(ProjectRef(project_id_for(project), str(project)))
        user = factory.open_existing_project(ProjectRef(project_id_for(user_root), str(user_root)))
        try:
            embedder = lane_or_none(config, plugins)
            scopes = [MemoryScope(s, wide, embedder=embedder) for s, wide in ((storage, False), (user, True))
                      if s is not None]
            memories = session_memories(scopes[0], scopes[1] if len(scopes) > 1 else None,
                                        int(config.get("memory.restore_count"))) if scopes else []
            return str(restore(storage, session_id, max_tokens=SESSION_START_TOKENS, limit=SESSION_START_SUMMARIES,
                               source=source, memories=memories)["context"])
        finally:
            for opened in (storage, user):
                if opened is not None:
                    opened.close()
    finally:
        factory.close()
