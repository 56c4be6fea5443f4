"""Install only where an agent is; uninstall puts back exactly what was there; backups stay under LCM_HOME."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from lcm_framework.installer.ledger import KEEP
from tests.conftest import run_lcm


@pytest.fixture
def path_env(tmp_path: Path) -> dict[str, str]:
    """A PATH holding no agent CLI but what a test puts in ``bin``."""
    (tmp_path / "bin").mkdir()
    return {"PATH": f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"}


def lcm(env: dict[str, str], *args: str) -> str:
    done = run_lcm(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def tree(home: Path) -> dict[str, bytes | None]:
    """Every path under HOME but LCM_HOME, with file contents."""
    return {str(p.relative_to(home)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(home.rglob("*")) if ".lcm" not in p.relative_to(home).parts}


def test_install_leaves_agents_that_are_not_installed_alone(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    (home / ".claude").mkdir()
    report = json.loads(lcm(path_env, "install", "--json"))
    assert report["agents"] == ["claude"] and set(report["skipped"]) == {"codex"}
    assert not (home / ".codex").exists()
    text = lcm(path_env, "install")
    assert "skipped Codex: no " in text and "lcm install --agent codex" in text


def test_with_no_agent_install_says_so_and_writes_nothing(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    done = run_lcm("install", env=path_env)
    assert done.returncode == 1 and "no coding agent is installed here" in done.stderr
    assert "lcm install --agent NAME" in done.stderr and "Traceback" not in done.stderr
    assert tree(home) == {}


def test_an_agent_on_path_counts_as_installed(lcm_env: Path, path_env: dict[str, str], tmp_path: Path) -> None:
    cli = tmp_path / "bin" / "codex"
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    report = json.loads(lcm(path_env, "install", "--json"))
    assert report["agents"] == ["codex"]
    assert (lcm_env.parent / ".codex" / "hooks.json").is_file()


def test_a_named_agent_is_installed_even_when_absent(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    lcm(path_env, "install", "--agent", "codex")
    assert (home / ".codex" / "hooks.json").is_file() and (home / ".codex" / "config.toml").is_file()
    assert not (home / ".claude").exists()
    lcm(path_env, "uninstall")
    assert tree(home) == {}  # ~/.codex, which install created, is gone again


def test_uninstall_restores_every_file_byte_for_byte(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    (home / ".claude").mkdir()
    (home / ".claude.json").write_text('{"numStartups":3,"tipsHistory":{}}')  # compact, no final newline
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "gpt-5"\n\n\n# trailing comment\n')
    before = tree(home)
    lcm(path_env, "install")
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["lcm"]
    lcm(path_env, "install")  # again: nothing changes, the original stays known
    lcm(path_env, "uninstall")
    assert tree(home) == before  # settings.json and hooks.json, which LCM created, are removed


def test_a_file_lcm_created_goes_even_after_the_agent_rewrote_it(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    (home / ".claude").mkdir()
    lcm(path_env, "install")
    state = home / ".claude.json"
    data = json.loads(state.read_text())
    state.write_text(json.dumps(data, indent=4))  # the agent rewrote it in its own layout
    settings = home / ".claude" / "settings.json"
    changed = json.loads(settings.read_text())
    changed["model"] = "opus"  # and the user added a setting of their own
    settings.write_text(json.dumps(changed, indent=2))
    lcm(path_env, "uninstall")
    assert not state.exists()  # nothing but LCM's entry was in it: no `{}` is left behind
    assert json.loads(settings.read_text()) == {"model": "opus"}


def test_backups_live_under_lcm_home_and_are_pruned(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    (home / ".claude").mkdir()
    (home / ".claude.json").write_text('{"numStartups": 1}\n')
    original = (home / ".claude.json").read_bytes()
    for _ in range(KEEP + 2):
        lcm(path_env, "install")
        lcm(path_env, "uninstall")
        assert (home / ".claude.json").read_bytes() == original
    assert not [p for p in home.rglob("*") if "backup" in p.name and ".lcm" not in p.parts]
    backups = sorted((lcm_env / "backups").iterdir())
    of_state = [p for p in backups if p.name.startswith(".claude.json.")]
    assert 1 <= len(of_state) <= KEEP
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in backups)
    assert any(p.read_bytes() == original for p in of_state)


def test_doctor_skips_an_agent_that_is_not_installed(lcm_env: Path, path_env: dict[str, str]) -> None:
    report = json.loads(run_lcm("doctor", "--json", env=path_env).stdout)
    claude = next(c for c in report["checks"] if c["name"] == "claude_hooks")
    assert claude["status"] == "skip" and claude["detail"].startswith("Claude Code not installed")
    lcm(path_env, "install", "--agent", "codex")
    lcm(path_env, "uninstall")
    report = json.loads(run_lcm("doctor", "--json", env=path_env).stdout)
    assert next(c for c in report["checks"] if c["name"] == "codex_hooks")["status"] == "skip"


def test_dry_run_json_is_only_json_with_the_diff_inside(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    (home / ".claude").mkdir()
    report = json.loads(lcm(path_env, "install", "--dry-run", "--json"))
    diffs = {Path(f["path"]).name: f["diff"] for f in report["files"]}
    assert "+++ " in diffs["settings.json"] and "hook SessionStart" in diffs["settings.json"]
    assert report["dry_run"] is True and all(f["backup"] is None for f in report["files"])
    assert tree(home) == {".claude": None}


def test_a_settings_file_linked_into_dotfiles_stays_a_link(lcm_env: Path, path_env: dict[str, str]) -> None:
    home = lcm_env.parent
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    original = '{\n  "theme": "dark"\n}\n'
    (dotfiles / "claude-settings.json").write_text(original)
    (home / ".claude").mkdir()
    link = home / ".claude" / "settings.json"
    link.symlink_to(dotfiles / "claude-settings.json")
    lcm(path_env, "install", "claude")
    assert link.is_symlink() and json.loads(link.read_text())["theme"] == "dark"
    assert "hooks" in json.loads((dotfiles / "claude-settings.json").read_text())  # the target got the hooks
    lcm(path_env, "uninstall", "claude")
    assert link.is_symlink() and link.readlink() == dotfiles / "claude-settings.json"
    assert (dotfiles / "claude-settings.json").read_text() == original
