"""The recall tools' arguments, described once (``Argument`` tuples): a capability that serves grep, search,
describe or expand registers these, so its MCP schema, daemon route and CLI options agree with LCM's own.

``GREP``, ``SEARCH``, ``DESCRIBE``, ``EXPAND`` are the argument tuples; ``ALL_PROJECTS`` and ``SUBAGENTS`` the
arguments they share; ``MAX_LIMIT`` and ``MAX_CONTENT_CHARS`` their caps.
"""

from ..recall.arguments import ALL_PROJECTS, DESCRIBE, EXPAND, GREP, MAX_CONTENT_CHARS, MAX_LIMIT, SEARCH, SUBAGENTS

__all__ = ["ALL_PROJECTS", "DESCRIBE", "EXPAND", "GREP", "MAX_CONTENT_CHARS", "MAX_LIMIT", "SEARCH", "SUBAGENTS"]
