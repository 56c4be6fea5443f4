"""Fixtures: real plugins, a real configuration, the effective scrubber."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.config import Config, load_config
from lcm_framework.kernel.plugins import Plugins, build_plugins
from lcm_framework.scrub import Scrubber, app_scrubber


@pytest.fixture(scope="session")
def plugins() -> Plugins:
    return build_plugins(env={})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".lcm").mkdir(parents=True)
    return root


@pytest.fixture
def make_config(project: Path, lcm_env: Path) -> Callable[..., Config]:
    def make(**overrides: Any) -> Config:
        return load_config(project=project, env={"LCM_HOME": str(lcm_env)}, overrides=overrides,
                           plugins=build_plugins())

    return make


@pytest.fixture
def fresh_plugins() -> Plugins:
    """A manager of its own (rule packs are cached per manager, and depend on the config)."""
    return build_plugins(env={})


@pytest.fixture(scope="session")
def builtin_scrubber(plugins: Plugins) -> Scrubber:
    from pathlib import Path as _P

    config = load_config(project=_P("/nonexistent-lcm-test-project"), env={"LCM_HOME": "/nonexistent-lcm-home"},
                         plugins=build_plugins())
    return app_scrubber(config, plugins)
