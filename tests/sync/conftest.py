"""Fixtures of the team-sync tests: a PostgreSQL backend on a fresh schema, events to deliver."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.storage.checked import CheckedBackend
from lcm_framework.storage.inbox import InboxEvent
from lcm_framework.storage.models import ProjectRef
from tests.postgres.support import TestDatabase, require_database


@pytest.fixture
def pg() -> TestDatabase:
    return require_database()


@pytest.fixture
def pg_schema(pg: TestDatabase) -> Iterator[str]:
    with pg.fresh_schema() as name:
        yield name


@pytest.fixture
def pg_backend(pg: TestDatabase, pg_schema: str, tmp_path: Path) -> Iterator[CheckedBackend]:
    backend = CheckedBackend(pg.factory(pg_schema, tmp_path))
    try:
        yield backend
    finally:
        backend.close()


def ref(name: str) -> ProjectRef:
    return ProjectRef(project_id=hashlib.sha256(name.encode()).hexdigest(), root=f"/work/{name}")


def make_event(machine: str, seq: int, prev: int | None, *, payload: dict[str, Any] | None = None,
               event: str = "PostToolUse") -> InboxEvent:
    body = json.dumps(payload or {"session_id": "s1", "tool": "Bash", "seq": seq}, sort_keys=True)
    event_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{machine}/{seq}"))
    digest = hashlib.sha256(f"{event_uuid}\n{seq}\n{body}".encode()).hexdigest()
    return InboxEvent(event_uuid, 1, machine, seq, prev, event, body, digest, datetime.now(UTC))


@pytest.fixture
def chain() -> Callable[..., list[InboxEvent]]:
    """``chain(machine, first, last)``: that machine's events first..last, each after the one before."""

    def make(machine: str, first: int, last: int, prev: int | None = None) -> list[InboxEvent]:
        out = []
        for seq in range(first, last + 1):
            out.append(make_event(machine, seq, prev))
            prev = seq
        return out

    return make
