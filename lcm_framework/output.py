"""Printing helpers for command output: JSON documents and aligned plain-text tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .jsonable import to_jsonable


def print_json(value: Any, out: TextIO | None = None) -> None:
    """``value`` (dataclasses, enums, datetimes included) as indented JSON on ``out`` (stdout)."""
    json.dump(to_jsonable(value), out or sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    (out or sys.stdout).write("\n")


def print_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO | None = None) -> None:
    """``rows`` under ``headers`` in left-aligned columns with a dashed rule, on ``out`` (stdout)."""
    stream = out or sys.stdout
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        stream.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
        if n == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")
