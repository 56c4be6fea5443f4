"""The operations layer: one function per verb, a typed request in, a typed result out.

The front doors (the ``lcm`` commands, the MCP tools, the daemon's routes, the web explorer) build a request
from what they parsed, call the verb and render its result: ``result.to_json()`` is the one JSON form, what
``--json`` prints, the tool returns and the route answers. Nothing here prints, parses a command line or
speaks HTTP. Modules, one per verb group: ``recall`` (grep, search, describe, expand), ``context``.
"""

from .base import Result, from_arguments
from .context import Context, ContextRequest, context
from .recall import (
    Described,
    DescribeRequest,
    Expanded,
    ExpandRequest,
    GrepFound,
    GrepRequest,
    InvalidRegexError,
    SearchFound,
    SearchRequest,
    describe,
    expand,
    grep,
    search,
)

__all__ = [
    "Context",
    "ContextRequest",
    "DescribeRequest",
    "Described",
    "ExpandRequest",
    "Expanded",
    "GrepFound",
    "GrepRequest",
    "InvalidRegexError",
    "Result",
    "SearchFound",
    "SearchRequest",
    "context",
    "describe",
    "expand",
    "from_arguments",
    "grep",
    "search",
]
