"""What ``lcm sync status``, ``lcm status`` and ``lcm doctor`` show of team sync: the local delivery backlog
and, per project, the inbox backlog per state and machine, with a verdict.

The verdict is ``solo`` (the backend has no inbox), ``ok``, ``growing`` (more is waiting than at the previous
look at least ``GROWTH_WINDOW_S`` earlier, and its oldest event was already waiting then: the drain is not
keeping up), ``stuck`` (the oldest undelivered or unapplied event is older than ``sync.stuck_after_s``) or
``unavailable`` (the inbox could not be read). Looks are remembered in ``$LCM_HOME/sync-backlog.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LcmError
from ..outbox import UNDELIVERED, Outbox, outbox_path

if TYPE_CHECKING:
    from ..app import App
    from .worker import ProjectAccess

GROWTH_WINDOW_S = 30.0
SAMPLES_FILE = "sync-backlog.json"


def local_backlog(home: Path) -> dict[str, Any]:
    """This machine's outbox by delivery state (no outbox: nothing waiting)."""
    path = outbox_path(home)
    if not path.exists():
        return {"machine_id": None, "by_state": {}, "undelivered": 0, "oldest_undelivered_at": None,
                "last_error": None, "quarantined": []}
    with Outbox(path) as box:
        backlog = box.backlog()
        quarantined = [{"event_uuid": e.uuid, "seq": e.seq, "event": e.event, "reason": e.delivery_error,
                        "where": "inbox" if e.delivered_at is not None else "local"} for e in box.quarantined()]
        machine = box.machine_id
    undelivered = sum(backlog.delivery.get(state, 0) for state in UNDELIVERED)
    return {"machine_id": machine, "by_state": backlog.delivery, "undelivered": undelivered,
            "oldest_undelivered_at": backlog.oldest_undelivered_at, "last_error": backlog.delivery_error,
            "quarantined": quarantined}


def remote_backlog(projects: ProjectAccess, roots: Sequence[str]) -> list[dict[str, Any]]:
    """Per project root, its inbox backlog (or the error that kept it from being read)."""
    out: list[dict[str, Any]] = []
    for root in roots:
        try:
            storage = projects.existing(root)
            if storage is None:
                continue  # nothing stored for it yet: no inbox rows either
            found = storage.passive_inbox.backlog()
        except LcmError as exc:
            out.append({"root": root, "error": str(exc)})
            continue
        open_rows = sum(n for state, n in found.by_state.items() if state in ("pending", "claimed", "retry"))
        age = (found.now - found.oldest_open_at).total_seconds() if found.oldest_open_at else None
        out.append({"root": root, "by_state": dict(found.by_state),
                    "by_machine": {m: dict(s) for m, s in found.by_machine.items()}, "open": open_rows,
                    "oldest_open_age_s": round(age, 3) if age is not None else None,
                    "last_error": found.last_error, "applied_total": found.log_rows})
    return out


def sync_status(app: App, projects: ProjectAccess | None, roots: Sequence[str], *,
                now: float | None = None) -> dict[str, Any]:
    """The whole picture with its verdict (``projects`` is None when the backend has no inbox)."""
    stamp = time.time() if now is None else now
    local = local_backlog(app.config.home)
    if local["oldest_undelivered_at"] is not None:
        local["oldest_undelivered_age_s"] = round(stamp - local["oldest_undelivered_at"], 3)
    if projects is None:
        return {"verdict": "solo", "backend": str(app.config.get("storage.backend")), "local": local,
                "projects": [], "detail": "the backend has no inbox: events stay on this machine"}
    remote = remote_backlog(projects, roots)
    waiting = local["undelivered"] + sum(p.get("open", 0) for p in remote)
    ages = [local.get("oldest_undelivered_age_s")] + [p.get("oldest_open_age_s") for p in remote]
    oldest = max((a for a in ages if a is not None), default=None)
    verdict, detail = _verdict(app, remote, waiting, oldest, stamp)
    return {"verdict": verdict, "detail": detail, "backend": str(app.config.get("storage.backend")),
            "waiting": waiting, "oldest_waiting_age_s": oldest, "local": local, "projects": remote}


@contextmanager
def project_access(app: App, overrides: Mapping[str, Any] | None = None
                   ) -> Iterator[tuple[ProjectAccess | None, list[str]]]:
    """(project access, the roots to look at: the outbox's and the app's project), or (None, []) when the
    backend has no inbox. Closed on exit."""
    from .projects import AppProjects, StandaloneApps

    if not app.storage.capabilities.passive_inbox:
        yield None, []
        return
    path = outbox_path(app.config.home)
    roots: list[str] = []
    if path.exists():
        with Outbox(path) as box:
            roots = box.project_roots()
    current = str(app.config.project_root)
    apps = StandaloneApps(app, overrides)
    projects = AppProjects(apps.app_for, lambda: [current])
    try:
        yield projects, list(dict.fromkeys([*roots, current]))
    finally:
        projects.close()
        apps.close()


def summary(app: App) -> dict[str, Any]:
    """The verdict and counts only (``lcm status``, ``lcm doctor``); an unreachable backend is ``unavailable``."""
    try:
        with project_access(app) as (projects, roots):
            snap = sync_status(app, projects, roots)
    except LcmError as exc:
        return {"verdict": "unavailable", "detail": str(exc), "waiting": None}
    return {"verdict": snap["verdict"], "detail": snap["detail"], "waiting": snap.get("waiting", 0),
            "oldest_waiting_age_s": snap.get("oldest_waiting_age_s"),
            "quarantined": sum(q["where"] == "local" for q in snap["local"]["quarantined"])
            + sum(p.get("by_state", {}).get("quarantined", 0) for p in snap["projects"])}


def _verdict(app: App, remote: list[dict[str, Any]], waiting: int, oldest: float | None,
             stamp: float) -> tuple[str, str]:
    stuck_after = float(app.config.get("sync.stuck_after_s"))
    previous = _remember(app.config.home, stamp, waiting)
    if any("error" in p for p in remote):
        return "unavailable", "an inbox could not be read: " + next(p["error"] for p in remote if "error" in p)
    if oldest is not None and oldest > stuck_after:
        return "stuck", f"{waiting} event(s) waiting, the oldest for {oldest:.0f} s (over {stuck_after:g} s)"
    if previous is not None and waiting > previous[1] and oldest is not None and oldest > stamp - previous[0]:
        return "growing", f"{waiting} event(s) waiting, {previous[1]} {stamp - previous[0]:.0f} s ago"
    return "ok", f"{waiting} event(s) waiting" if waiting else "nothing waiting"


def _remember(home: Path, stamp: float, waiting: int) -> tuple[float, int] | None:
    """Record this look; return the newest earlier one at least ``GROWTH_WINDOW_S`` old."""
    from ..safe_paths import atomic_write_private

    path = home / SAMPLES_FILE
    try:
        samples = [(float(t), int(n)) for t, n in json.loads(path.read_text("utf-8"))]
    except (OSError, ValueError, TypeError):
        samples = []
    older = [s for s in samples if s[0] <= stamp - GROWTH_WINDOW_S]
    kept = [*[s for s in samples if s[0] > stamp - 3600][-20:], (stamp, waiting)]
    try:
        atomic_write_private(path, json.dumps(kept).encode("utf-8"))
    except OSError:
        pass
    return older[-1] if older else None
