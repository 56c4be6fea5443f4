"""Printing helpers for command output: terminal-safe text, JSON documents, aligned plain-text tables and sizes."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .jsonable import to_jsonable

if TYPE_CHECKING:
    import argparse

JSON_HELP = "print JSON instead of text"
"""The ``--json`` option's help, the same for every command."""

# What a terminal would act on instead of showing: C0 controls but newline and tab (ESC starts CSI/OSC
# sequences, \r and backspace overwrite), DEL, the C1 controls (U+009B is a one-character CSI), the bidi
# embeddings, overrides and isolates that reorder what is shown, and lone surrogates (which cannot be
# encoded at all).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on written as a visible ``\\uXXXX`` escape (ESC is
    ``\\u001b``, so ``\\x1b[31m`` shows as ``\\u001b[31m``); newline and tab are kept.

    The escape is JSON's, so a JSON document stays the same document: its strings decode to the same text.
    """
    return _UNSAFE.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def add_json(parser: argparse.ArgumentParser, **options: Any) -> None:
    """The ``--json`` option (``options`` go to ``add_argument``, e.g. a ``default``)."""
    parser.add_argument("--json", action="store_true", help=JSON_HELP, **options)


def print_json(value: Any, out: TextIO | None = None) -> None:
    """``value`` (dataclasses, enums, datetimes included) as indented JSON on ``out`` (stdout); the strings
    keep their exact text, controls and bidi characters written as JSON escapes."""
    text = json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, sort_keys=False)
    (out or sys.stdout).write(terminal_safe(text) + "\n")


def print_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO | None = None) -> None:
    """``rows`` under ``headers`` in left-aligned columns with a dashed rule, on ``out`` (stdout)."""
    stream = out or sys.stdout
    cells = [[terminal_safe(str(c)) for c in headers]] + [[terminal_safe(str(c)) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        stream.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
        if n == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")


def human_size(value: int | None) -> str:
    """``1536`` -> ``1.5 KiB``; ``None`` -> ``-``."""
    if value is None:
        return "-"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"
