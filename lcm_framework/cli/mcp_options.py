"""``lcm mcp``'s options, defined once: the fast path in ``cli/main.py`` parses them before any plugin loads,
``cmd_mcp`` adds them to the full parser (cheap to import: argparse only)."""

from __future__ import annotations

import argparse


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="print the tools that would be served and exit")
