"""Registers the recall capabilities served by ``lcm mcp`` and the daemon (cheap to import)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lcm_framework.extensions import Capability
from lcm_framework.hookspecs import hookimpl

if TYPE_CHECKING:
    from lcm_framework.app import App

_ALL = {"type": "boolean", "default": False, "description": "Search every project under $LCM_HOME."}


def _lazy(name: str) -> Callable[[App, Mapping[str, Any]], Any]:
    def handler(app: App, args: Mapping[str, Any]) -> Any:
        from . import tools

        return getattr(tools, name)(app, args)

    handler.__name__ = name
    return handler


CAPABILITIES = (
    Capability(
        name="lcm_grep",
        description=(
            "Find stored messages and summaries of this project's coding sessions by words or regex. "
            "Message hits are grouped under the summary that covers them. Use lcm_expand or lcm_describe "
            "on an id to read the original text verbatim."
        ),
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Words (full_text), an RE2 regex, or a substring."},
                "mode": {"type": "string", "enum": ["full_text", "regex", "substring"], "default": "full_text",
                         "description": "How pattern matches."},
                "scope": {"type": "string", "enum": ["messages", "summaries", "both"], "default": "both",
                          "description": "What to search."},
                "session": {"type": "string", "description": "Only this session id (or unique prefix)."},
                "since": {"type": "string", "description": "Only items at or after this ISO date/time."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20,
                          "description": "Maximum hits per kind."},
                "all_projects": _ALL,
            },
            "required": ["pattern"],
        },
        handler=_lazy("lcm_grep"),
    ),
    Capability(
        name="lcm_search",
        description="Ranked full-text search over stored messages and summaries, best matches first.",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 10,
                          "description": "Maximum results."},
                "all_projects": _ALL,
            },
            "required": ["query"],
        },
        handler=_lazy("lcm_search"),
    ),
    Capability(
        name="lcm_describe",
        description=(
            "Show one summary (sum_...), message (msg_N) or large file (file_...) in full: metadata, lineage "
            "(source summaries, source messages, covering summaries) and content."
        ),
        parameters={
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "sum_<hex>, msg_<number> or file_<hex>."},
                "max_chars": {"type": "integer", "minimum": 100, "maximum": 200_000, "default": 50_000,
                              "description": "Cut the content after this many characters."},
                "all_projects": _ALL,
            },
            "required": ["id"],
        },
        handler=_lazy("lcm_describe"),
    ),
    Capability(
        name="lcm_expand",
        description=(
            "Expand a summary id to the summaries it condensed, level by level; with include_messages a leaf "
            "summary expands to its original messages verbatim. Stops before passing token_cap."
        ),
        parameters={
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "A summary id (sum_<hex>) or msg_<number>."},
                "depth": {"type": "integer", "minimum": 1, "maximum": 64, "default": 1,
                          "description": "Levels to descend."},
                "include_messages": {"type": "boolean", "default": False,
                                     "description": "Expand leaf summaries to their source messages."},
                "token_cap": {"type": "integer", "minimum": 100,
                              "description": "Token cap (default compaction.max_expand_tokens)."},
                "all_projects": _ALL,
            },
            "required": ["id"],
        },
        handler=_lazy("lcm_expand"),
    ),
)


@hookimpl
def lcm_register_capabilities(register: Callable[[Capability], None]) -> None:
    for capability in CAPABILITIES:
        register(capability)
