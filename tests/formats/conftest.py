"""The contrib agent plugins installed on their own (``pip install --target``), shared by their tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contrib import CONTRIB as CONTRIB_ROOT
from tests.contrib import install_target

CONTRIB = CONTRIB_ROOT / "lcm-format-gemini"
QWEN = CONTRIB_ROOT / "lcm-format-qwen"


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Gemini CLI plugin alone."""
    return install_target(tmp_path_factory.mktemp("contrib") / "site", "lcm-format-gemini")


@pytest.fixture(scope="session")
def qwen_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Qwen Code plugin alone."""
    return install_target(tmp_path_factory.mktemp("contrib") / "site", "lcm-format-qwen")
