"""The contrib Gemini CLI plugin installed on its own (``pip install --target``), shared by its tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import REPO

CONTRIB = REPO / "contrib" / "lcm-format-gemini"


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install --no-deps --target`` of a copy of the contrib distribution (offline, no build isolation)."""
    root = tmp_path_factory.mktemp("contrib")
    source = root / "src"
    shutil.copytree(CONTRIB, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = root / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target
