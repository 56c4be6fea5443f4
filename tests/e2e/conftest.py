"""The real agent CLIs (pinned, from npm) against the fake model server: skipped with the reason when npm or the
registry is unreachable here, never skipped under CI. Each test installs only the CLIs it uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from tests.conftest import skip_or_fail
from tests.contrib import install_target

from .agents import Agents
from .fake_model import FakeModel
from .harness import User

CONTRIB_PLUGINS = ("lcm-format-gemini", "lcm-format-qwen", "lcm-format-opencode", "lcm-format-copilot")
"""The contrib agent plugins the e2e users have installed (on ``PYTHONPATH``: hooks, daemon and MCP see them)."""


def _unavailable(reason: str) -> NoReturn:
    skip_or_fail(reason)
    raise AssertionError(reason)  # skip_or_fail raised


@pytest.fixture(scope="session")
def agents() -> Agents:
    return Agents(_unavailable)


@pytest.fixture(scope="session")
def contrib_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_target(tmp_path_factory.mktemp("e2e-plugins") / "site", *CONTRIB_PLUGINS)


@pytest.fixture
def user(agents: Agents, contrib_site: Path, tmp_path: Path) -> Iterator[User]:
    model = FakeModel()
    person = User(tmp_path / "user", agents, model, extra_env={"PYTHONPATH": str(contrib_site)})
    try:
        yield person
    finally:
        person.stop_daemon()
        model.close()
