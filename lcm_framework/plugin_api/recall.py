"""The recall and memory verbs of the operations layer (``lcm_framework.operations``), for agent-facing
capabilities: each takes the app and a typed request and returns a typed result whose ``to_json()`` is what
every front door gives.

``grep``/``search``/``describe``/``expand`` with ``GrepRequest``/``SearchRequest``/``DescribeRequest``/
``ExpandRequest``; ``run_memory_action`` is ``lcm memory ACTION``; ``memory_scope`` opens the storage memories of
this project (or the user-wide ones) live in.
"""

from ..memory.actions import run as run_memory_action
from ..memory.scope import memory_scope
from ..operations import (
    DescribeRequest,
    ExpandRequest,
    GrepRequest,
    Result,
    SearchRequest,
    describe,
    expand,
    grep,
    search,
)

__all__ = [
    "DescribeRequest",
    "ExpandRequest",
    "GrepRequest",
    "Result",
    "SearchRequest",
    "describe",
    "expand",
    "grep",
    "memory_scope",
    "run_memory_action",
    "search",
]
