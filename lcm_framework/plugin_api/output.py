"""Command output for plugin commands: JSON documents and aligned tables (``lcm ... --json`` and plain)."""

from ..jsonable import to_jsonable
from ..output import print_json, print_table

__all__ = ["print_json", "print_table", "to_jsonable"]
