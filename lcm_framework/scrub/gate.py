"""The scrubber every write goes through: one per App and project root, built once and kept with the App.

Every door that stores text scrubs with it: transcript import, memories (CLI, MCP, daemon, promotion),
summaries and exploration summaries a model wrote, large-file references. Building it fails closed
(``build.build_scrubber``): a ScrubberError, never an empty rule set, so nothing is stored unscrubbed.
A failed build is not kept: the next write tries again (after the configuration was fixed).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .build import app_scrubber
from .scrubber import Scrubber

if TYPE_CHECKING:
    from ..app import App
    from ..config import Config

_SCRUBBERS: weakref.WeakKeyDictionary[Any, dict[Path, Scrubber]] = weakref.WeakKeyDictionary()


def project_scrubber(app: App, root: Path | None = None, *, config: Callable[[], Config] | None = None) -> Scrubber:
    """The scrubber of the project at ``root`` (default: the app's), protected by every format's samples.

    ``config`` gives the configuration as seen from ``root`` when it is not the app's own project; it is
    read only when the scrubber is not built yet.
    """
    key = app.config.project_root if root is None else root
    built = _SCRUBBERS.setdefault(app, {})
    if key not in built:
        effective = app.config if config is None or key == app.config.project_root else config()
        built[key] = app_scrubber(effective, app.plugins)
    return built[key]


def scrub_text(app: App, text: str) -> str:
    """``text`` with every secret the app's rules find replaced by ``[REDACTED:<rule id>]``."""
    return project_scrubber(app).scrub_text(text)[0]
