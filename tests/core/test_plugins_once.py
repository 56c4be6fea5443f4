"""A process builds its plugins once, at its top: no command loads a second plugin manager (``lcm install``
listing its agents, ``lcm mcp --list`` its tools, configuration resolving its keys)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import lcm_framework.kernel.plugins as kernel_plugins
from lcm_framework.cli.main import main


@pytest.mark.parametrize("argv", [
    ["install", "--agent", "claude", "--dry-run"],
    ["uninstall", "--agent", "claude", "--dry-run"],
    ["mcp", "--list"],
    ["plugins", "--all"],
    ["config", "list"],
    ["hook", "--help"],
], ids=lambda argv: " ".join(argv))
def test_a_command_builds_the_plugins_once(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    builds: list[int] = []
    real: Callable[..., Any] = kernel_plugins.build_plugins

    def counting(*args: Any, **kwargs: Any) -> Any:
        builds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(kernel_plugins, "build_plugins", counting)
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv)
    except SystemExit as done:  # --help
        code = int(done.code or 0)
    assert code == 0, capsys.readouterr().err
    assert len(builds) == 1
