"""The separately installable plugin packages under ``contrib/``, installed the way a user installs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONTRIB = REPO / "contrib"
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
OFFLINE = ["--no-index", "--no-deps", "--no-build-isolation"]
"""No download: the build backend and ``lcm-framework`` come from the running environment."""


def source_copy(package: str, into: Path) -> Path:
    """A clean copy of ``contrib/<package>`` (no build leftovers), so building never writes into the clone."""
    copy = into / package
    shutil.copytree(CONTRIB / package, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    return copy


def install_target(target: Path, *packages: str) -> Path:
    """``pip install --target`` of each named contrib package (offline); put ``target`` on ``PYTHONPATH``."""
    sources = target.with_name(target.name + "-src")
    sources.mkdir(parents=True, exist_ok=True)
    copies = [str(source_copy(p, sources)) for p in packages]
    subprocess.run([*PIP, "install", "--quiet", *OFFLINE, "--target", str(target), *copies],
                   check=True, capture_output=True, timeout=300)
    return target
