"""A separate process hitting one schema (``python -m tests.postgres.worker ACTION SCHEMA HOME GO N``).

Opens the project, waits for the ``GO`` file so every worker starts together, runs ACTION ``N``
times and prints one JSON result line.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from lcm_framework.errors import ConflictError
from lcm_framework.storage.models import NewMessage, ProjectRef, Role

from .support import database_or_unavailable

REF = ProjectRef("w" * 64, "/srv/shared")


def get_or_create(project: Any, n: int) -> list[int]:
    return [project.conversations.get_or_create_conversation("shared-session").conversation_id for _ in range(n)]


def append(project: Any, n: int) -> list[int]:
    conv = project.conversations.get_or_create_conversation("append-session")
    seqs: list[int] = []
    for i in range(n):
        batch = [NewMessage(Role.USER, f"{os.getpid()} {i} {k}", 1) for k in range(1 + i % 3)]
        seqs.extend(m.seq for m in project.conversations.append_messages(conv.conversation_id, batch))
    return seqs


def lease(project: Any, n: int) -> list[int]:
    """Enter the leased critical section ``n`` times; log enter/exit as messages under a fence check."""
    conv = project.conversations.get_or_create_conversation("lease-log")
    holder = f"worker-{os.getpid()}"
    fences: list[int] = []
    while len(fences) < n:
        granted = project.coordination.acquire_lease("compact:shared", holder, 10)
        if granted is None:
            time.sleep(0.005)
            continue
        for step in ("enter", "exit"):
            def write(repos: Any, step: str = step, granted: Any = granted) -> None:
                repos.coordination.check_fence(granted)
                repos.conversations.append_messages(conv.conversation_id,
                                                    [NewMessage(Role.SYSTEM, f"{step} {holder}", 0)])
            project.transaction(write)
            time.sleep(0.002)
        fences.append(granted.fence)
        project.coordination.release_lease(granted)
    return fences


def hold_lease(project: Any, n: int) -> list[int]:
    """Take a short lease and then hang (the test kills this process)."""
    granted = project.coordination.acquire_lease("crash:shared", "doomed", n)
    print(json.dumps([granted.fence if granted else -1]), flush=True)
    time.sleep(600)
    return []


ACTIONS = {"get_or_create": get_or_create, "append": append, "lease": lease, "hold_lease": hold_lease}


def main(action: str, schema: str, home: str, go: str, count: str) -> None:
    db = database_or_unavailable()
    factory = db.factory(schema, Path(home))
    try:
        project = factory.open_project(REF)
        while not Path(go).exists():
            time.sleep(0.005)
        try:
            result: Any = ACTIONS[action](project, int(count))
        except ConflictError as exc:
            result = {"error": exc.code}
        print(json.dumps(result), flush=True)
    finally:
        factory.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
