"""Resources shared by the files of one import run: formats, projects, scrubbers, quarantine stores."""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config, load_config
from ..errors import LcmError
from ..recall.lane_feed import EmbedSetup, LaneFeed
from ..recall.semantic import fill_lane, lane_settings, left_to_fill
from ..storage.contracts import ProjectStorage
from ..storage.models import ProjectRef
from ..transcripts.contracts import TranscriptFormat
from .links import SpawnIndex
from .quarantine import QuarantineStore
from .report import ProgressEvent
from .state import ReplayCache

if TYPE_CHECKING:
    from ..app import App
    from ..scrub import Scrubber

log = logging.getLogger("lcm.ingest")


@dataclass
class AppCaches:
    """What one App keeps between imports (a long-lived daemon ingests on every Stop hook): replay counters
    (the compiled scrubber of each project root is kept by ``scrub.gate``)."""

    replay: ReplayCache = field(default_factory=ReplayCache)


_CACHES: weakref.WeakKeyDictionary[Any, AppCaches] = weakref.WeakKeyDictionary()


def app_caches(app: App) -> AppCaches:
    caches = _CACHES.get(app)
    if caches is None:
        caches = _CACHES[app] = AppCaches()
    return caches


@dataclass
class RunOptions:
    batch_size: int
    dry_run: bool = False
    project: Path | None = None
    max_batch_bytes: int = 32 * 1024 * 1024
    progress: Callable[[ProgressEvent], None] | None = None
    embed_beside: bool = False
    """Embed the stored messages in a process of their own while the run goes on (``recall.lane_feed``): for
    large imports, where the plugins can be rebuilt in another process."""


class RunContext:
    """Opens each project, scrubber and quarantine store once per run; ``close()`` releases them."""

    def __init__(self, app: App, options: RunOptions, selected: Mapping[str, TranscriptFormat]) -> None:
        self.app = app
        self.options = options
        self.formats = app.plugins.formats()
        self.selected = selected
        self.cache = app_caches(app).replay
        self._stack = ExitStack()
        self._projects: dict[str, ProjectStorage | None] = {}
        self._roots: dict[str, Path] = {}
        self._quarantines: dict[tuple[str, str], QuarantineStore] = {}
        self._spawn_indexes: dict[str, SpawnIndex] = {}
        self._known_projects: set[str] | None = None
        self._feeds: dict[tuple[tuple[str, str], ...], LaneFeed] = {}
        self._feed_of: dict[str, LaneFeed | None] = {}

    def project_ref(self, root: Path) -> ProjectRef:
        return self.app.project_ref(root)

    def storage(self, ref: ProjectRef) -> ProjectStorage | None:
        """The project's storage; in a dry run only an existing project is opened (never created)."""
        if ref.project_id not in self._projects:
            if self.options.dry_run and not self._exists(ref):
                self._projects[ref.project_id] = None
            else:
                self._projects[ref.project_id] = self._stack.enter_context(self.app.project(ref.root))
                self._roots[ref.project_id] = Path(ref.root)
        return self._projects[ref.project_id]

    def embed_beside(self, ref: ProjectRef, stored: list[tuple[int, str]]) -> None:
        """Hand the messages a batch of the project just stored to the run's embedding process for the
        project's lane settings (``lane_feed``), with ``RunOptions.embed_beside`` and the lane not off."""
        storage = self._projects.get(ref.project_id)
        if not self.options.embed_beside or storage is None:
            return
        if ref.project_id not in self._feed_of:
            config = self.config_for(Path(ref.root))
            key, on = lane_settings(config), config.get("recall.semantic") != "off"
            if on and key not in self._feeds:
                self._feeds[key] = LaneFeed(EmbedSetup(Path(ref.root), dict(config.env), config.flags, os.getpid()))
            self._feed_of[ref.project_id] = self._feeds[key] if on else None
        feed = self._feed_of[ref.project_id]
        if feed is not None:
            feed.offer(ref.project_id, storage, stored)

    def spawn_index(self, ref: ProjectRef) -> SpawnIndex:
        """The project's spawns read so far in this run (see ``links.SpawnIndex``)."""
        return self._spawn_indexes.setdefault(ref.project_id, SpawnIndex())

    def _exists(self, ref: ProjectRef) -> bool:
        if self._known_projects is None:
            self._known_projects = {p.project_id for p in self.app.storage.list_projects()}
        return ref.project_id in self._known_projects

    def config_for(self, root: Path) -> Config:
        """The configuration as seen from ``root`` (its project file and patterns), flags kept."""
        config = self.app.config
        if root == config.project_root:
            return config
        flags = {key: r.value for key, r in config.values.items() if r.source == "flag"}
        return load_config(project=root, env=config.env, overrides=flags, plugins=self.app.plugins)

    def scrubber(self, root: Path) -> Scrubber:
        """The scrubber of the project at ``root`` (built once, before any source of it is read)."""
        from ..scrub.gate import project_scrubber

        return project_scrubber(self.app, root, config=lambda: self.config_for(root))

    def quarantine(self, project_id: str, client_name: str) -> QuarantineStore:
        key = (project_id, client_name)
        if key not in self._quarantines:
            store = QuarantineStore(project_id, client_name, self.app.config.home)
            self._quarantines[key] = self._stack.enter_context(store)
        return self._quarantines[key]

    def close(self) -> None:
        """Embed what this run stored (the semantic lane, where it is on), then release everything. A failed
        embedding is a warning, never an error of the run (which may be closing on an error of its own):
        ``lcm embed`` and the next import embed what is left."""
        try:
            if not self.options.dry_run:
                for running in self._feeds.values():
                    try:
                        running.finish()
                    except LcmError as exc:
                        log.warning("the semantic lane's vectors were not all written: %s", exc)
                for project_id, root in self._roots.items():
                    storage = self._projects.get(project_id)
                    if storage is not None:
                        try:
                            feed = self._feed_of.get(project_id)
                            dropped = feed is not None and project_id in feed.dropped  # all to embed again
                            if feed is None or dropped or left_to_fill(storage):
                                fill_lane(storage, self.config_for(root), self.app.plugins, everything=dropped)
                        except LcmError as exc:
                            log.warning("the semantic lane was not filled for %s: %s", root, exc)
        finally:
            self._stack.close()
