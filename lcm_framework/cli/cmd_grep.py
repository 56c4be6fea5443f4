"""``lcm grep PATTERN``: find messages and summaries, message hits grouped by their covering summary."""

from __future__ import annotations

import argparse
import contextlib
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..app import App
from ..capabilities import add_options, bind, options
from ..jsonable import to_jsonable
from ..kernel.extensions import CommandSpec
from ..recall_arguments import GREP
from .output import print_json
from .recall_common import add_json, one_line, origin, project_names, session, when
from .where_data_is import hint_when_session_missing, print_where_data_is

if TYPE_CHECKING:
    from ..storage.models import SearchMode

SNIPPET_INDENT = "      "


def configure(parser: argparse.ArgumentParser) -> None:
    add_options(parser, GREP)  # the lcm_grep tool's arguments, defaults included
    parser.add_argument("--include-meta", action="store_true",
                        help="also search the records kept out of the conversation: agent scaffolding, client "
                             "metadata, the agents' compaction summaries, LCM's own restored context")
    add_json(parser)


def run(args: argparse.Namespace, app: App) -> int:
    from ..recall import Scope, grep_all, parse_since
    from ..recall.meta import grep_meta_all
    from ..storage.models import SearchMode

    v = bind(GREP, options(args, GREP))
    since, mode, every = parse_since(v.get("since")), SearchMode(v["mode"]), v["all_projects"]
    with _refused_pattern(v["pattern"], mode), hint_when_session_missing(app, all_projects=every):
        results = grep_all(app, v["pattern"], all_projects=every, session=v.get("session"), mode=mode,
                           scope=Scope(v["scope"]), since=since, limit=v["limit"],
                           include_subagents=v["include_subagents"])
        meta = grep_meta_all(app, v["pattern"], all_projects=every, session=v.get("session"), mode=mode,
                             since=since, limit=v["limit"]) if args.include_meta else []
    found = any(r.total for r in results) or bool(meta)
    if args.json:
        value: Any = [r for r in results if r.total] if every else results[0]
        if args.include_meta:
            value = {"results": value, "meta_hits": meta} if every else {**to_jsonable(value), "meta_hits": meta}
        print_json(value)
        if not found:
            print_where_data_is(app, all_projects=every)
        return 0 if found else 1
    names = project_names(app, [r.project_id for r in results if r.total]) if every else {}
    room = max(40, shutil.get_terminal_size().columns) - len(SNIPPET_INDENT)  # each snippet fits the terminal
    for result in results:
        if every and result.total:
            print(f"== project {names[result.project_id]}")
        for group in result.groups:
            print(f"{group.summary_id or '(not summarized yet)'}")
            for hit in group.hits:
                print(f"  {hit.id:<12} {when(hit.created_at)}{session(hit)}{origin(hit)}")
                print(SNIPPET_INDENT + one_line(hit.snippet, room))
        if result.summary_hits:
            print("summaries:")
            for hit in result.summary_hits:
                print(f"  {hit.id}  {when(hit.created_at)}{session(hit)}{origin(hit)}")
                print(SNIPPET_INDENT + one_line(hit.snippet, room))
    if meta:
        print("kept out of the conversation (--include-meta):")
        for m in meta:
            print(f"  {m.id:<14} {m.kind:<17} {when(m.created_at)}")
            print(SNIPPET_INDENT + one_line(m.snippet, room))
    if not found:
        hint = (" (the exact text, case-sensitive; --mode full_text finds the words in any order and case)"
                if mode is SearchMode.SUBSTRING else "")
        print(f"no match for {v['pattern']!r}{hint}")
        print_where_data_is(app, all_projects=every)
        return 1
    return 0


@contextlib.contextmanager
def _refused_pattern(pattern: str, mode: SearchMode) -> Iterator[None]:
    """A regex the backend (or RE2, for --include-meta) refuses: a usage error (exit status 2) on one line."""
    from ..storage.models import SearchMode

    if mode is not SearchMode.REGEX:
        yield
        return
    import re2

    from ..errors import DataValidationError
    from ..recall import InvalidArgumentError

    try:
        yield
    except (DataValidationError, re2.error) as exc:
        where = f"the {exc.backend} backend" if isinstance(exc, DataValidationError) else "RE2"
        raise InvalidArgumentError(f"--mode regex: {where} refuses the pattern {pattern!r} "
                                   "(not a valid regular expression)") from None


COMMAND = CommandSpec(
    name="grep",
    help="find messages and summaries matching a pattern",
    description=(
        "Message hits are grouped under the leaf summary that covers them; `lcm expand SUM_ID\n"
        "--include-messages` or `lcm describe msg_N` then shows the original verbatim.\n"
        "Exit status 1 when nothing matches."
    ),
    configure=configure,
    run=run,
)
