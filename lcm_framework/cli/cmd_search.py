"""``lcm search QUERY``: ranked recall over messages, summaries and promoted memory."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from ..app import App
from ..kernel.arguments import add_options, options
from ..kernel.extensions import CommandSpec
from ..kernel.plugins import Plugins
from ..recall.arguments import SEARCH
from .output import print_json, terminal_safe, terminal_width
from .recall_common import add_json, one_line, origin, when
from .where_data_is import print_where_data_is

if TYPE_CHECKING:
    from ..recall import Ranked

BAR_CELLS = 10
BOLD, DIM, CYAN, GREEN = "1", "2", "36", "32"


def configure(parser: argparse.ArgumentParser, plugins: Plugins) -> None:
    add_options(parser, SEARCH)  # the lcm_search tool's arguments, defaults included
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..operations import SearchRequest, from_arguments, search

    found = search(app, from_arguments(SearchRequest, SEARCH, options(args, SEARCH)))
    ranked, every = found.ranked, found.request.all_projects
    if args.json:
        print_json(found.to_json())
        if not ranked:
            print_where_data_is(app, all_projects=every)
        return 0 if ranked else 1
    if not ranked:
        print(f"nothing found for {found.request.query!r}")
        print_where_data_is(app, all_projects=every)
        return 1
    painter = Painter.for_stdout()
    width = terminal_width()
    for r in ranked:
        for line in render(r, width, painter, root=found.roots.get(r.project_id) if every else None):
            painter.emit(line)
    return 0


class Painter:
    """SGR colour around text that is already terminal-safe; off unless stdout is a terminal and
    ``NO_COLOR`` is unset (https://no-color.org)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stdout(cls) -> Painter:
        return cls(sys.stdout.isatty() and not os.environ.get("NO_COLOR"))

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def emit(self, line: str) -> None:
        """Print a line built from ``terminal_safe`` text and this painter's codes."""
        trusted = getattr(sys.stdout, "write_trusted", None)
        if self.enabled and trusted is not None:
            trusted(line + "\n")
        else:
            print(line)


def relevance(score: float) -> str:
    """``██████····  57%``: the result's relevance (0..1) as a bar and a percentage."""
    filled = round(max(0.0, min(1.0, score)) * BAR_CELLS)
    return "█" * filled + "·" * (BAR_CELLS - filled) + f" {round(score * 100):>3}%"


def render(r: Ranked, width: int, paint: Painter, *, root: str | None = None) -> list[str]:
    """The lines of one result, each at most ``width`` columns (but an id or path longer than a line, which is
    never cut): rank, id, speaker or kind, date (a summary's covered span), relevance; the best sentences
    between the neighbouring turns (dim); a summary's best-matching turns; session, covering summaries and
    (several projects searched) the project's root."""
    hit = r.hit
    if r.span is not None:
        start, end = when(r.span[0]), when(r.span[1])
        dated = f"{start} .. {end[11:] if end[:10] == start[:10] else end}"
    else:
        dated = when(hit.created_at)
    who = r.role or hit.kind
    room = max(20, width - 5)
    lines = _fields(f"{r.rank:>3}. ", [(hit.id, BOLD + ";" + CYAN), (who, ""), (dated, ""),
                                       (relevance(hit.score), GREEN)], width, paint)
    before = [t for t in r.context if _seq(t.id) < _seq(hit.id)]
    after = [t for t in r.context if _seq(t.id) > _seq(hit.id)]
    lines += [paint(DIM, "     " + terminal_safe(one_line(f"{t.role}: {t.text}", room))) for t in before]
    lines.append("     " + terminal_safe(one_line(hit.snippet, room)))
    lines += [paint(DIM, "     " + terminal_safe(one_line(f"{t.role}: {t.text}", room))) for t in after]
    lines += ["     - " + terminal_safe(one_line(f"{t.id} {t.role} {when(t.created_at)}: {t.text}", room - 2))
              for t in r.hits]
    meta = [f"session {hit.session_id}"] if hit.session_id else []
    if r.covered_by:
        meta.append(f"in {', '.join(r.covered_by)}")
    where = origin(hit).strip()
    if where:
        meta.append(where)
    if root is not None:
        meta.append(f"project {root}")
    return lines + [paint(DIM, line) for line in _packed(meta, width)]


def _packed(items: list[str], width: int) -> list[str]:
    """``items`` two spaces apart on lines indented five, a new line when the next would pass ``width``; an
    item is never cut (ids and paths are copied from here), so one longer than the line stands alone."""
    lines: list[str] = []
    for item in map(terminal_safe, items):
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += "  " + item
        else:
            lines.append("     " + item)
    return lines


def _fields(lead: str, fields: list[tuple[str, str]], width: int, paint: Painter) -> list[str]:
    """``fields`` (text, colour) two spaces apart after ``lead``, continued on lines indented five when the
    next one would pass ``width``; a field is never cut."""
    lines, line, used = [], lead, len(lead)
    for n, (text, colour) in enumerate(fields):
        gap = 0 if n == 0 else 2
        if n and used + gap + len(text) > width:
            lines.append(line)
            line, used, gap = "     ", 5, 0
        line += " " * gap + paint(colour, text) if colour else " " * gap + text
        used += gap + len(text)
    return [*lines, line]


def _seq(ref: str) -> int:
    return int(ref[4:]) if ref.startswith("msg_") and ref[4:].isdigit() else 0


COMMAND = CommandSpec(
    name="search",
    help="ranked search over messages, summaries and memories",
    description="Questions in plain words, best matches first, each with its relevance, speaker and date "
                "and the turns around it. Exit status 1 when nothing is found.",
    configure=configure,
    run=run,
)
