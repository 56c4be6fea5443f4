"""One hook event as the daemon reads it, once: LCM's event, its project, session and transcript paths.

``lcm hook`` forwards LCM's fields (``agent_hooks.payload.HookInput.forward``); the ``/hook`` route and the
outbox consumer each build a ``HookCall`` from them once and hand it on, so a payload's project and paths are
resolved and checked in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent_hooks.events import EventAction, action_of
from ..agent_hooks.payload import SUBAGENT_TRANSCRIPT
from ..errors import DataValidationError
from ..paths import find_project_root


@dataclass(frozen=True, slots=True)
class HookCall:
    event: str
    action: EventAction
    project: Path
    session_id: str | None
    transcript: Path | None
    subagent_transcript: Path | None
    source: str | None
    payload: dict[str, Any]
    """The forwarded fields with ``project`` resolved: what the outbox stores."""

    @classmethod
    def of(cls, event: str, payload: Mapping[str, Any]) -> HookCall:
        """Read a forwarded hook payload; DataValidationError (domain ``hooks``) when it names no absolute
        ``cwd`` or ``project``, or a transcript path that is not absolute."""
        project = project_of(payload)
        return cls(event, action_of(event), project, _text(payload.get("session_id")),
                   _path(payload, "transcript_path"), _path(payload, SUBAGENT_TRANSCRIPT),
                   _text(payload.get("source")), {**payload, "project": str(project)})


def project_of(payload: Mapping[str, Any]) -> Path:
    """The project root of a hook event: its ``project`` field, else found from its ``cwd``."""
    given = _text(payload.get("project"))
    if given:
        return Path(given)
    cwd = _text(payload.get("cwd"))
    if not cwd or not Path(cwd).is_absolute():
        raise DataValidationError("hook payload needs an absolute cwd or project", backend="daemon",
                                  domain="hooks")
    return find_project_root(Path(cwd))


def _path(payload: Mapping[str, Any], field: str) -> Path | None:
    given = _text(payload.get(field))
    if given is None:
        return None
    path = Path(given)
    if not path.is_absolute():
        raise DataValidationError(f"{field} must be absolute", backend="daemon", domain="hooks")
    return path


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
