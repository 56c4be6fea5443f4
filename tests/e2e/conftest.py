"""The real Claude Code and Codex CLIs (pinned, from npm) against the fake model server: skipped with the
reason when npm or the registry is unreachable here, never skipped under CI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail

from .agents import Agents, AgentsUnavailable, ensure_agents
from .fake_model import FakeModel
from .harness import User


@pytest.fixture(scope="session")
def agents() -> Agents:
    try:
        return ensure_agents()
    except AgentsUnavailable as exc:
        skip_or_fail(f"the real agent CLIs are unavailable: {exc}")
        raise


@pytest.fixture
def user(agents: Agents, tmp_path: Path) -> Iterator[User]:
    model = FakeModel()
    person = User(tmp_path / "user", agents, model)
    try:
        yield person
    finally:
        person.stop_daemon()
        model.close()
