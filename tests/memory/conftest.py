"""The scrubber memories are stored through in these tests: the built-in rules, as ``lcm memory add`` uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.scrub import Scrubber, app_scrubber


@pytest.fixture(scope="session")
def scrubber() -> Scrubber:
    config = load_config(project=Path("/nonexistent-lcm-test-project"), env={"LCM_HOME": "/nonexistent-lcm-home"},
                         plugins=build_plugins())
    return app_scrubber(config, build_plugins(env={}))
