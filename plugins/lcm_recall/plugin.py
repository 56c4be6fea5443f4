"""Registers the recall capabilities served by ``lcm mcp`` and the daemon (cheap to import)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import Capability, hookimpl

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import App

_ALL = {"type": "boolean", "default": False, "description": "Search every project under $LCM_HOME."}
_SUBAGENTS = {"type": "boolean", "default": True,
              "description": "Also search the conversations of sub-agent runs (Task/Agent calls); false leaves "
                             "them out. Their hits name the parent session and tool call."}


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _integer(description: str, minimum: int, maximum: int | None = None, default: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    if default is not None:
        schema["default"] = default
    return {**schema, "description": description}


def _parameters(required: str, **properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema of ``properties`` (plus ``all_projects``) requiring ``required``."""
    return {"type": "object", "properties": {**properties, "all_projects": _ALL}, "required": [required]}


def _lazy(name: str, module: str) -> Callable[[App, Mapping[str, Any]], Any]:
    def handler(app: App, args: Mapping[str, Any]) -> Any:
        from importlib import import_module

        return getattr(import_module(f"{__package__}.{module}"), name)(app, args)

    handler.__name__ = name
    return handler


def _capability(name: str, description: str, parameters: dict[str, Any], module: str = "tools") -> Capability:
    return Capability(name=name, description=description, parameters=parameters, handler=_lazy(name, module))


CAPABILITIES = (
    _capability(
        "lcm_grep",
        "Find stored messages and summaries of this project's coding sessions by words or regex. "
        "Message hits are grouped under the summary that covers them. Use lcm_expand or lcm_describe "
        "on an id to read the original text verbatim.",
        _parameters(
            "pattern",
            pattern=_text("Words (full_text), an RE2 regex, or a substring."),
            mode={"type": "string", "enum": ["full_text", "regex", "substring"], "default": "full_text",
                  "description": "How pattern matches."},
            scope={"type": "string", "enum": ["messages", "summaries", "both"], "default": "both",
                   "description": "What to search."},
            session=_text("Only this session id (or unique prefix)."),
            since=_text("Only items at or after this ISO date/time."),
            limit=_integer("Maximum hits per kind.", 1, 200, 20),
            include_subagents=_SUBAGENTS,
        ),
    ),
    _capability(
        "lcm_search",
        "Ranked full-text search over stored messages and summaries, best matches first.",
        _parameters("query", query=_text("Words to look for."), limit=_integer("Maximum results.", 1, 200, 10),
                    include_subagents=_SUBAGENTS),
    ),
    _capability(
        "lcm_describe",
        "Show one summary (sum_...), message (msg_N) or large file (file_...) in full: metadata, lineage "
        "(source summaries, source messages, covering summaries) and content.",
        _parameters(
            "id",
            id=_text("sum_<hex>, msg_<number> or file_<hex>."),
            max_chars=_integer("Cut the content after this many characters.", 100, 200_000, 50_000),
        ),
    ),
    _capability(
        "lcm_expand",
        "Expand a summary id to the summaries it condensed, level by level; with include_messages a leaf "
        "summary expands to its original messages verbatim. A message that started a sub-agent run (a "
        "Task/Agent call or its result) expands to the run's messages. Stops before passing token_cap.",
        _parameters(
            "id",
            id=_text("A summary id (sum_<hex>) or msg_<number>."),
            depth=_integer("Levels to descend.", 1, 64, 1),
            include_messages={"type": "boolean", "default": False,
                              "description": "Expand leaf summaries to their source messages."},
            token_cap=_integer("Token cap (default compaction.max_expand_tokens).", 100),
        ),
    ),
    _capability(
        "lcm_store",
        "Remember a durable insight of this project (a decision, a root cause and its fix, a convention, a "
        "command that worked, a constraint the user stated) so later sessions see it when relevant. Storing "
        "the same insight again raises its confidence instead of adding a copy. Returns its id (mem_N).",
        {"type": "object", "required": ["text"], "properties": {
            "text": _text("The insight, one or two self-contained sentences."),
            "tags": {"type": "array", "items": {"type": "string"},
                     "description": "Exact tags in order: file paths, tools, topics."},
            "user_wide": {"type": "boolean", "default": False,
                       "description": "A user-wide preference for every project (gmem_N) instead of this project."},
        }},
        "memory_tools",
    ),
    _capability(
        "lcm_feedback",
        "Say whether a memory (mem_N, gmem_N) or summary (sum_...) that LCM surfaced was useful; useful ones "
        "rise in confidence and are surfaced first, unhelpful ones sink.",
        {"type": "object", "required": ["id", "useful"], "properties": {
            "id": _text("The surfaced id."),
            "useful": {"type": "boolean", "description": "Whether it helped."},
        }},
        "memory_tools",
    ),
)


@hookimpl
def lcm_register_capabilities(register: Callable[[Capability], None]) -> None:
    for capability in CAPABILITIES:
        register(capability)
