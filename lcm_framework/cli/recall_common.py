"""Arguments and formatting shared by the compaction and recall commands."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..output import add_json as add_json  # the commands' --json option, re-exported for them

if TYPE_CHECKING:
    from ..app import App


def add_all_projects(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all-projects", action="store_true", help="look in every project under $LCM_HOME, not only this one"
    )


def origin(hit: Any) -> str:
    """`` (sub-agent of SESSION, call ID)`` for a hit in a sub-agent run's conversation, else empty."""
    found = hit.subagent
    if found is None:
        return ""
    return f"  (sub-agent of {found.parent_session_id}, call {found.tool_call_id or 'unknown'})"


def session(hit: Any) -> str:
    """``  session 7c1f3a52`` (a prefix ``lcm context`` and ``--session`` take) for a hit in a main session;
    empty for a sub-agent run's hit, whose ``origin`` names the session that started it."""
    if hit.session_id is None or hit.subagent is not None:
        return ""
    return f"  session {hit.session_id[:8]}"


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if moment else "-"


def one_line(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


def project_names(app: App, project_ids: Sequence[str]) -> dict[str, str]:
    """How each project is shown to a person: its root (the short id only when no project under ``$LCM_HOME``
    has that id)."""
    from ..recall.results import project_roots

    return {pid: root or pid[:12] for pid, root in project_roots(app, list(dict.fromkeys(project_ids))).items()}
