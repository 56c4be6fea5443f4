"""``lcm sessions [--all-projects] [--json]``: the stored sessions, their ids and what each was about."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..app import App
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..output import terminal_safe
from .output import print_json
from .recall_common import add_all_projects, add_json, one_line, when
from .where_data_is import print_where_data_is

if TYPE_CHECKING:
    from ..recall.sessions import SessionInfo


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_all_projects(parser)
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import SessionsRequest, sessions

    listed = sessions(app, SessionsRequest(all_projects=args.all_projects))
    found = listed.sessions
    if args.json:
        print_json(listed.to_json())
    elif not found:
        print("no sessions")
    else:
        _render(found, shutil.get_terminal_size().columns)
    if not found:
        print_where_data_is(app, all_projects=args.all_projects)
    return 0


def _render(sessions: Sequence[SessionInfo], width: int) -> None:
    """Per project (its root as a header): each main session, newest first, then the sub-agent runs it
    started, indented, oldest first."""
    projects: dict[str, list[SessionInfo]] = {}
    for session in sessions:
        projects.setdefault(session.project_root, []).append(session)
    for root, listed in projects.items():
        mains = {s.session_id for s in listed if s.subagent_of is None}
        runs: dict[str, list[SessionInfo]] = {}
        for s in listed:
            if s.subagent_of in mains:
                runs.setdefault(s.subagent_of, []).append(s)
        print(f"== {terminal_safe(root)}: {len(mains)} sessions, {len(listed) - len(mains)} sub-agent runs")
        for session in (s for s in listed if s.subagent_of not in mains):
            _row(session, None, width)
            for run in sorted(runs.get(session.session_id, []), key=lambda r: (r.first_at, r.session_id)):
                _row(run, session, width)


def _row(session: SessionInfo, parent: SessionInfo | None, width: int) -> None:
    """Two lines: id, agent, time span and size; then the title or first prompt. A run under its ``parent``
    is indented and named by what its id adds to the parent's."""
    if parent is not None:
        pad, name = "    ", "sub-agent run ..." + session.session_id.removeprefix(parent.session_id)
    else:
        pad, name = "", session.session_id
        if session.subagent_of:
            name += f" (sub-agent run of {session.subagent_of})"
    agent = "" if parent is not None and parent.agent == session.agent else f"  {session.agent or 'unknown agent'}"
    print(terminal_safe(f"{pad}{name}{agent}  {_span(session)}  {session.messages} messages"))
    about = session.title or session.first_prompt
    if about:
        print(terminal_safe(f"{pad}    {one_line(about, max(40, width - len(pad) - 4))}"))


def _span(session: SessionInfo) -> str:
    """``2025-09-03 00:52 .. 01:02`` (the date once when both ends share it)."""
    first, last = when(session.first_at), when(session.last_at)
    return f"{first} .. {last[11:] if last[:10] == first[:10] else last}"


COMMAND = CommandSpec(
    name="sessions",
    help="list the stored sessions: agent, id, time span, messages, first prompt",
    description=(
        "One entry per session of this project (or of every project: --all-projects), most recently\n"
        "active first: the agent that wrote it, its id (what `lcm context`, `lcm grep --session` and\n"
        "`lcm compact --session` take, or any unique prefix of it), first and last message time, message\n"
        "count, and its title or first prompt. Sub-agent runs are listed under the session that started them."
    ),
    configure=configure,
    run=run,
)
