"""Recall and memory operations for agent-facing capabilities (what the built-in MCP tools call).

``grep_all``/``search_all``/``find_all`` run over this project or every project; ``describe``/``expand`` take
one project's storage and a ``parse_ref`` reference; ``run_memory_action`` is ``lcm memory ACTION``;
``memory_scope`` opens the storage memories of this project (or the user-wide ones) live in.
"""

from ..memory.actions import run as run_memory_action
from ..memory.scope import memory_scope
from ..recall import Scope, describe, expand, find_all, grep_all, parse_ref, parse_since, search_all
from ..recall.results import search_document

__all__ = [
    "Scope",
    "describe",
    "expand",
    "find_all",
    "grep_all",
    "memory_scope",
    "parse_ref",
    "parse_since",
    "run_memory_action",
    "search_all",
    "search_document",
]
