"""Printing helpers shared by commands: terminal-safe standard output, wrapping to the terminal's width, a
progress bar; JSON, tables, sizes and ``terminal_safe`` come from ``lcm_framework.output`` (re-exported here
for the commands)."""

from __future__ import annotations

import contextlib
import io
import sys
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO, TextIO, cast

from ..output import human_size, print_json, print_table, terminal_safe

__all__ = ["Progress", "TerminalSafeStream", "human_size", "print_json", "print_table", "safe_stdout",
           "terminal_safe", "terminal_width", "wrapped"]


class TerminalSafeStream(io.TextIOBase):
    """A text stream that writes everything through ``terminal_safe``: stored transcript text is untrusted, so
    no escape or control character a command prints reaches the terminal raw. JSON passes through as the
    same document (the escapes are JSON's)."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_safe(text))
        return len(text)

    def write_trusted(self, text: str) -> None:
        """Write ``text`` as it is: only for control sequences a command builds itself (such as SGR colour
        codes), never for stored text."""
        self.raw.write(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding

    @property
    def buffer(self) -> BinaryIO:
        """The binary stream underneath, for a binary protocol (JSON-RPC of ``lcm mcp``), never for text."""
        return cast(BinaryIO, self.raw.buffer)


@contextlib.contextmanager
def safe_stdout() -> Iterator[TerminalSafeStream]:
    """``sys.stdout`` as a ``TerminalSafeStream`` for the duration (``lcm`` runs every command inside it)."""
    original = sys.stdout
    stream = TerminalSafeStream(original)
    sys.stdout = cast(TextIO, stream)
    try:
        yield stream
    finally:
        sys.stdout = original


def terminal_width() -> int:
    """Columns to fit output into: the terminal's (or ``$COLUMNS``), 80 when unknown."""
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


def wrapped(text: str, indent: str = "", width: int | None = None) -> str:
    """``text`` on ``indent``-ed lines that fit ``width`` (default the terminal's), continuation lines indented
    two more; a word longer than a line (an id) stays whole on its own line."""
    import textwrap

    return textwrap.fill(text, width=max(width or terminal_width(), len(indent) + 20), initial_indent=indent,
                         subsequent_indent=indent + "  ", break_long_words=False, break_on_hyphens=False)


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
                              f"{terminal_safe(note[:40]):<40}")
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


