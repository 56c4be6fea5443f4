"""The recall and memory verbs of the operations layer (``lcm_framework.operations``), for agent-facing
capabilities: each takes the app and a typed request and returns a typed result whose ``to_json()`` is what
every front door gives.

``grep``/``search``/``describe``/``expand`` with ``GrepRequest``/``SearchRequest``/``DescribeRequest``/
``ExpandRequest``; ``store``/``feedback`` (the agent's memory tools) with ``StoreRequest``/``FeedbackRequest``;
``memory`` runs any ``lcm memory ACTION`` (``MemoryRequest``).
"""

from ..operations import (
    DescribeRequest,
    ExpandRequest,
    FeedbackRequest,
    GrepRequest,
    MemoryRequest,
    Result,
    SearchRequest,
    StoreRequest,
    describe,
    expand,
    feedback,
    grep,
    memory,
    search,
    store,
)

__all__ = [
    "DescribeRequest",
    "ExpandRequest",
    "FeedbackRequest",
    "GrepRequest",
    "MemoryRequest",
    "Result",
    "SearchRequest",
    "StoreRequest",
    "describe",
    "expand",
    "feedback",
    "grep",
    "memory",
    "search",
    "store",
]
