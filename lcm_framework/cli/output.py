"""Printing helpers shared by commands: JSON, aligned tables, a terminal progress bar."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ..jsonable import to_jsonable


def print_json(value: Any, out: TextIO | None = None) -> None:
    json.dump(to_jsonable(value), out or sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    (out or sys.stdout).write("\n")


def print_table(rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO | None = None) -> None:
    stream = out or sys.stdout
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        stream.write("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")
        if n == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")


class Progress:
    """A one-line progress bar on a terminal (stderr); silent otherwise."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.done = 0
        self._last = 0.0

    def advance(self, amount: int = 1, note: str = "") -> None:
        self.done += amount
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            share = min(self.done / self.total, 1.0)
            bar = "#" * int(share * 30)
            self.stream.write(f"\r{self.label} [{bar:<30}] {share:6.1%} {note[:40]:<40}")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
