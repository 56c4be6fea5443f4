"""The hook's lean settings reader agrees with ``load_config`` for the daemon keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lcm_framework.agent_hooks.settings import DEFAULT_AUTOSTART, DEFAULT_PORT, hook_settings
from lcm_framework.config import SETTINGS, load_config
from lcm_framework.kernel.plugins import build_plugins


def test_defaults_match_the_schema() -> None:
    assert SETTINGS["daemon.port"].default == DEFAULT_PORT
    assert SETTINGS["daemon.autostart"].default == DEFAULT_AUTOSTART
    assert "LCM_DAEMON_PORT" in SETTINGS["daemon.port"].env
    assert "LCM_DAEMON_AUTOSTART" in SETTINGS["daemon.autostart"].env


@pytest.mark.parametrize(("global_toml", "project_toml", "env"), [
    ("", "", {}),
    ("[daemon]\nport = 4000\n", "", {}),
    ("[daemon]\nport = 4000\nautostart = false\n", "[daemon]\nport = 4100\n", {}),
    ("[daemon]\nport = 4000\n", "[daemon]\nautostart = true\n", {"LCM_DAEMON_PORT": "4200"}),
    ("[summarizer]\nprovider = \"extractive\"\n", "", {"LCM_DAEMON_AUTOSTART": "off"}),
    ("", "[daemon]\nautostart = false\n", {"LCM_DAEMON_AUTOSTART": "yes"}),
])
def test_agrees_with_load_config(lcm_env: Path, tmp_path: Path, global_toml: str, project_toml: str,
                                 env: dict[str, str]) -> None:
    project = tmp_path / "proj"
    (project / ".lcm").mkdir(parents=True)
    (project / "sub").mkdir()
    lcm_env.mkdir(parents=True, exist_ok=True)
    if global_toml:
        (lcm_env / "config.toml").write_text(global_toml)
    if project_toml:
        (project / ".lcm" / "config.toml").write_text(project_toml)
    environ = {**os.environ, **env}
    lean = hook_settings(project / "sub", environ)
    full = load_config(cwd=project / "sub", env=environ, plugins=build_plugins(environ))
    assert lean.project == full.project_root == project
    assert lean.home == full.home
    assert lean.port == full.get("daemon.port")
    assert lean.autostart == full.get("daemon.autostart")


@pytest.mark.parametrize("env", [{"LCM_DAEMON_PORT": "0"}, {"LCM_DAEMON_PORT": "http"},
                                 {"LCM_DAEMON_AUTOSTART": "maybe"}])
def test_invalid_values_raise(lcm_env: Path, tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        hook_settings(tmp_path, {**os.environ, **env})
