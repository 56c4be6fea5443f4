"""The agent list of ``lcm install`` / ``uninstall`` / ``hook`` / ``doctor`` is the registered integrations."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_lcm


def test_help_lists_the_registered_agents(lcm_env: Path) -> None:
    install = run_lcm("install", "--help")
    assert install.returncode == 0
    assert "claude (Claude Code), codex (Codex), or all" in " ".join(install.stdout.split())
    assert "{claude,codex,all}" in install.stdout
    assert "claude (Claude Code), codex (Codex)" in " ".join(run_lcm("hook", "--help").stdout.split())
    assert "{claude,codex,all}" in run_lcm("uninstall", "--help").stdout


def test_a_disabled_plugin_takes_its_agent_away(lcm_env: Path) -> None:
    home = lcm_env.parent
    (home / ".codex").mkdir()
    (home / ".claude").mkdir()
    env = {"LCM_DISABLE_PLUGINS": "codex"}
    assert "{claude,all}" in run_lcm("install", "--help", env=env).stdout
    refused = run_lcm("install", "codex", env=env)
    assert refused.returncode == 2 and "invalid choice: 'codex'" in refused.stderr
    result = run_lcm("install", "--json", env=env)  # all: every registered agent installed here
    assert result.returncode == 0, result.stderr
    written = {Path(f["path"]).relative_to(home).as_posix() for f in json.loads(result.stdout)["files"]}
    assert written == {".claude/settings.json", ".claude.json"}
    assert not any((home / ".codex").iterdir())
    checks = {c["name"] for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert "claude_hooks" in checks and "codex_hooks" not in checks
