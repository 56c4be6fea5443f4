"""Where LCM keeps things: ``$LCM_HOME``, project roots and per-project directories."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

PROJECT_MARKERS = (".lcm", ".git", ".hg", "pyproject.toml", "package.json")


def lcm_home(env: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    return Path(environ.get("LCM_HOME") or Path.home() / ".lcm").expanduser()


def find_project_root(start: Path) -> Path:
    """Nearest ancestor holding a project marker; ``start`` itself when none does."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return start


def project_config_path(root: Path) -> Path:
    return root / ".lcm" / "config.toml"


def project_id_for(root: Path | str) -> str:
    """Stable id of a project: sha256 of its resolved absolute path."""
    return hashlib.sha256(str(Path(root).resolve()).encode("utf-8")).hexdigest()

