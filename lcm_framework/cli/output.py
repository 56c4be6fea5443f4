"""Printing helpers shared by commands: a terminal progress bar and sizes; JSON and tables come from
``lcm_framework.output`` (re-exported here for the commands)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from ..output import print_json, print_table

__all__ = ["Progress", "human_size", "print_json", "print_table"]


class Progress:
    """A one-line progress bar on a terminal (stderr) with the time left once it can be told; silent
    otherwise."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.done = 0
        self._clock = clock
        self._started = clock()
        self._last = -1.0

    def advance(self, amount: int = 1, note: str = "") -> None:
        self.done += amount
        now = self._clock()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            share = min(self.done / self.total, 1.0)
            bar = "#" * int(share * 30)
            self.stream.write(f"\r{self.label} [{bar:<30}] {share:6.1%} {_left(now - self._started, share)} "
                              f"{note[:40]:<40}")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _left(elapsed: float, share: float) -> str:
    """``ETA m:ss`` (or ``h:mm:ss``) from the pace so far; blank for the first second or before any progress."""
    if elapsed < 1 or share <= 0:
        return " " * 12
    hours, rest = divmod(int(elapsed * (1 - share) / share), 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"ETA {hours}:{minutes:02d}:{seconds:02d}" if hours else f"ETA {minutes}:{seconds:02d}"
    return f"{text:<12}"


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
