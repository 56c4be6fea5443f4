"""Command output for plugin commands: the ``--json`` option, JSON documents and aligned tables (``lcm ... --json``
and plain; ``lcm`` makes every command's standard output terminal-safe itself)."""

from ..output import add_json, print_json, print_table

__all__ = ["add_json", "print_json", "print_table"]
