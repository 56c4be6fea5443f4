"""The terminal progress bar: share, time left from the pace so far, silent off a terminal."""

from __future__ import annotations

import io

from lcm_framework.cli.output import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_the_share_and_the_time_left() -> None:
    now = [100.0]
    out = _Terminal()
    bar = Progress(1000, "importing", out, clock=lambda: now[0])
    bar.advance(100, "a.jsonl")
    assert " 10.0% " in out.getvalue() and "ETA" not in out.getvalue()  # no pace known in the first second
    now[0] += 30
    bar.advance(150, "b.jsonl")  # a quarter in 30 s: 90 s left
    last = out.getvalue().split("\r")[-1]
    assert "[#######" in last and " 25.0% " in last and "ETA 1:30" in last and "b.jsonl" in last
    now[0] += 3600
    bar.advance(50)  # 30% after 3630 s: 2 h 21 min 10 s left
    assert "ETA 2:21:10" in out.getvalue().split("\r")[-1]
    bar.finish()
    assert out.getvalue().endswith("\n")


def test_off_a_terminal_nothing_is_drawn() -> None:
    out = io.StringIO()
    bar = Progress(10, "importing", out)
    bar.advance(5)
    bar.finish()
    assert out.getvalue() == ""
