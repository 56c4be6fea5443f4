"""Command output for plugin commands: the ``--json`` option, JSON documents, aligned tables and terminal-safe
text (``lcm ... --json`` and plain)."""

from ..jsonable import to_jsonable
from ..output import JSON_HELP, add_json, print_json, print_table, terminal_safe

__all__ = ["JSON_HELP", "add_json", "print_json", "print_table", "terminal_safe", "to_jsonable"]
