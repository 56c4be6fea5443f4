"""``lcm hook``'s options are described once (``agent_hooks.runner.OPTIONS``): the hot path and the full
command line (``lcm --project X hook``) refuse the same values with the same words."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_lcm

TOO_LONG = "--timeout must be between 0 and 600 seconds"


def test_both_parsers_check_an_option_the_same_way(tmp_path: Path) -> None:
    hot = run_lcm("hook", "Stop", "--timeout", "700", input="{}", cwd=tmp_path)
    assert hot.returncode == 0 and TOO_LONG in hot.stderr  # the agent is never failed
    full = run_lcm("--project", str(tmp_path), "hook", "Stop", "--timeout", "700", input="{}", cwd=tmp_path)
    assert full.returncode == 2 and TOO_LONG in full.stderr  # a usage error at a terminal
