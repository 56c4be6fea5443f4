"""Registers the recall capabilities served by ``lcm mcp`` and the daemon (cheap to import)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import Argument, Capability, hookimpl
from lcm_framework.plugin_api import recall_arguments as arguments

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import Host


def _verb(verb: str, request: str) -> Callable[[Host, Mapping[str, Any]], Any]:
    """The handler running the operations layer's ``verb`` with the checked arguments as its ``request``."""
    def handler(app: Host, args: Mapping[str, Any]) -> Any:
        from lcm_framework.plugin_api import recall

        return getattr(recall, verb)(app, getattr(recall, request)(**args)).to_json()

    handler.__name__ = f"lcm_{verb}"
    return handler


def _capability(name: str, description: str, args: tuple[Argument, ...],
                handler: Callable[[Host, Mapping[str, Any]], Any]) -> Capability:
    return Capability(name=name, description=description, arguments=args, handler=handler)


CAPABILITIES = (
    _capability(
        "lcm_grep",
        "Find stored messages and summaries of this project's coding sessions by words or regex. "
        "Message hits are grouped under the summary that covers them. Use lcm_expand or lcm_describe "
        "on an id to read the original text verbatim.",
        arguments.GREP, _verb("grep", "GrepRequest"),
    ),
    _capability(
        "lcm_search",
        "Ranked full-text search over stored messages and summaries, best matches first.",
        arguments.SEARCH, _verb("search", "SearchRequest"),
    ),
    _capability(
        "lcm_describe",
        "Show one summary (sum_...), message (msg_N) or large file (file_...) in full: metadata, lineage "
        "(source summaries, source messages, covering summaries) and content.",
        arguments.DESCRIBE, _verb("describe", "DescribeRequest"),
    ),
    _capability(
        "lcm_expand",
        "Expand a summary id to the summaries it condensed, level by level; with include_messages a leaf "
        "summary expands to its original messages verbatim. A message that started a sub-agent run (a "
        "Task/Agent call or its result) expands to the run's messages. Stops before passing token_cap.",
        arguments.EXPAND, _verb("expand", "ExpandRequest"),
    ),
    _capability(
        "lcm_store",
        "Remember a durable insight of this project (a decision, a root cause and its fix, a convention, a "
        "command that worked, a constraint the user stated) so later sessions see it when relevant. Storing "
        "the same insight again raises its confidence instead of adding a copy. Returns its id (mem_N).",
        (
            Argument("text", str, "The insight, one or two self-contained sentences.", required=True),
            Argument("tags", list, "Exact tags in order: file paths, tools, topics."),
            Argument("user_wide", bool, "A user-wide preference for every project (gmem_N) instead of this "
                     "project.", default=False),
        ),
        _verb("store", "StoreRequest"),
    ),
    _capability(
        "lcm_feedback",
        "Say whether a memory (mem_N, gmem_N) or summary (sum_...) that LCM surfaced was useful; useful ones "
        "rise in confidence and are surfaced first, unhelpful ones sink.",
        (
            Argument("id", str, "The surfaced id.", required=True),
            Argument("useful", bool, "Whether it helped.", required=True),
        ),
        _verb("feedback", "FeedbackRequest"),
    ),
)


@hookimpl
def lcm_register_capabilities(register: Callable[[Capability], None]) -> None:
    for capability in CAPABILITIES:
        register(capability)
