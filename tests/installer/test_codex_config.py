"""Codex's config.toml: LCM's hooks are trusted the way Codex checks it, and Codex's own later edits survive
uninstall (Codex rewrites the file with a TOML editor that appends new tables at the end of the document)."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest
from lcm_format_codex import trust as codex_trust

from lcm_framework.errors import LcmError
from lcm_framework.installer import tomlkeys
from lcm_framework.installer.agents import changes
from lcm_framework.kernel.plugins import build_plugins
from tests.conftest import run_lcm
from tests.installer.test_install import CODEX_CONFIG, CODEX_HOOKS


@pytest.fixture
def codex_home(lcm_env: Path) -> Path:
    root = lcm_env.parent / ".codex"
    root.mkdir()
    (root / "hooks.json").write_text(json.dumps(CODEX_HOOKS, indent=2) + "\n")
    (root / "config.toml").write_text(CODEX_CONFIG)
    return root


def codex_appends(path: Path, table: str) -> None:
    """What Codex's TOML editor does when it adds a table: insert it before the document's trailing comments
    and blank lines (they stay the document's end), never inside another table's keys."""
    lines = path.read_text().splitlines(keepends=True)
    cut = len(lines)
    while cut and (not lines[cut - 1].strip() or lines[cut - 1].lstrip().startswith("#")):
        cut -= 1
    path.write_text("".join(lines[:cut]) + "\n" + table + "".join(lines[cut:]))


def test_hash_is_the_one_codex_computes() -> None:
    """Codex 0.171.0 ran this hook with exactly this trusted_hash in config.toml (observed with the real CLI)."""
    handler = {"type": "command", "command": "/work/wt-agents/.venv/bin/lcm hook SessionStart --agent codex",
               "timeout": 10}
    assert codex_trust.hook_hash("SessionStart", None, handler) == \
        "sha256:39957c87ce02908cf56d10d1acbc3a5dbaa984a1c6038b4411f2184078fe9b58"
    assert codex_trust.event_label("PreCompact") == "pre_compact"
    assert codex_trust.hook_hash("Stop", None, {**handler, "timeout": 11}) != codex_trust.hook_hash(
        "Stop", None, handler)


def test_install_trusts_every_lcm_hook_at_its_position(codex_home: Path) -> None:
    assert run_lcm("install", "codex").returncode == 0
    hooks = json.loads((codex_home / "hooks.json").read_text())
    config = tomllib.loads((codex_home / "config.toml").read_text())
    state = config["hooks"]["state"]
    ours = codex_trust.lcm_hooks(codex_home / "hooks.json", hooks)
    assert {t.event for t in ours} == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd",
                                       "PostToolUse"}
    # the user's SessionStart group comes first, so LCM's is group 1 there
    assert f"{codex_home / 'hooks.json'}:session_start:1:0" in state
    assert {k: v["trusted_hash"] for k, v in state.items()} == {t.key: t.hash for t in ours}
    assert codex_trust.trust_problems(ours, config) == []
    assert len(state) == len(ours)  # the user's own hook is not trusted on their behalf


def test_doctor_fails_on_untrusted_or_changed_hooks(codex_home: Path) -> None:
    assert run_lcm("install", "codex").returncode == 0
    config_path = codex_home / "config.toml"
    installed = config_path.read_text()
    ok = run_lcm("doctor", "--json")
    codex = next(c for c in json.loads(ok.stdout)["checks"] if c["name"] == "codex_hooks")
    assert codex["status"] == "ok", codex

    text = installed.replace(codex_trust_hash_line(installed, "stop"), 'trusted_hash = "sha256:00"')
    config_path.write_text(text)
    changed = next(c for c in json.loads(run_lcm("doctor", "--json").stdout)["checks"] if c["name"] == "codex_hooks")
    assert changed["status"] == "fail" and "Stop changed since it was trusted" in changed["detail"]
    assert changed["fix"] == "lcm install codex"

    config_path.write_text(tomlkeys.remove(installed, [
        tomlkeys.Key(("hooks", "state", k), "trusted_hash", v["trusted_hash"])
        for k, v in tomllib.loads(installed)["hooks"]["state"].items()], "config"))
    untrusted = next(c for c in json.loads(run_lcm("doctor", "--json").stdout)["checks"]
                     if c["name"] == "codex_hooks")
    assert untrusted["status"] == "fail" and "SessionStart untrusted" in untrusted["detail"]
    assert run_lcm("install", "codex").returncode == 0  # the fix doctor names
    again = next(c for c in json.loads(run_lcm("doctor", "--json").stdout)["checks"] if c["name"] == "codex_hooks")
    assert again["status"] == "ok"


def codex_trust_hash_line(text: str, event: str) -> str:
    block = re.search(rf'\[hooks\.state\."[^"]*:{event}:\d+:0"\]\n(trusted_hash = "[^"]+")', text)
    assert block, text
    return block.group(1)


def test_uninstall_keeps_the_tables_codex_added_after_install(codex_home: Path) -> None:
    original = (codex_home / "config.toml").read_bytes()
    assert run_lcm("install", "codex").returncode == 0
    config = codex_home / "config.toml"
    codex_appends(config, '[projects."/home/me/src/app"]\ntrust_level = "trusted"\n')
    codex_appends(config, '[tui]\nnotifications = true\n')
    codex_appends(config, '[hooks.state."/home/me/.codex/hooks.json:session_start:0:0"]\n'
                          'trusted_hash = "sha256:users-own-hook"\n')
    before_uninstall = tomllib.loads(config.read_text())
    assert run_lcm("uninstall", "codex").returncode == 0
    after = tomllib.loads(config.read_text())
    assert after["projects"] == before_uninstall["projects"] and after["tui"] == {"notifications": True}
    assert after["hooks"]["state"] == {"/home/me/.codex/hooks.json:session_start:0:0": {
        "trusted_hash": "sha256:users-own-hook"}}
    assert "lcm" not in after["mcp_servers"]
    assert config.read_bytes().startswith(original)  # the user's text before install is untouched


def test_uninstall_leaves_keys_someone_changed_and_keys_added_to_lcm_tables(codex_home: Path) -> None:
    assert run_lcm("install", "codex").returncode == 0
    config = codex_home / "config.toml"
    text = config.read_text()
    text = text.replace('args = ["mcp"]\n', 'args = ["mcp"]\nstartup_timeout_sec = 20\n')
    config.write_text(text)
    assert run_lcm("uninstall", "codex").returncode == 0
    after = tomllib.loads(config.read_text())
    assert after["mcp_servers"]["lcm"] == {"startup_timeout_sec": 20}  # what the user added stays
    assert "state" not in after.get("hooks", {})


def test_an_older_marked_block_holding_codex_tables_loses_only_lcm_keys(codex_home: Path) -> None:
    # the block an older install wrote, with a table Codex added later inside it
    command = json.dumps(tomllib.loads(_installed_mcp(codex_home))["mcp_servers"]["lcm"]["command"])
    config = codex_home / "config.toml"
    config.write_text(CODEX_CONFIG + "\n" + tomlkeys.LEGACY_MARKERS[0] + "\n[mcp_servers.lcm]\n"
                      f"command = {command}\nargs = [\"mcp\"]\n\n[tui]\nnotifications = true\n"
                      + tomlkeys.LEGACY_MARKERS[1] + "\n")
    assert run_lcm("uninstall", "codex").returncode == 0
    after = tomllib.loads(config.read_text())
    assert after["tui"] == {"notifications": True} and "lcm" not in after["mcp_servers"]
    assert tomlkeys.LEGACY_MARKERS[0] not in config.read_text()


def _installed_mcp(codex_home: Path) -> str:
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    found = changes("codex", env, install=True, plugins=build_plugins())
    (change,) = [c for c in found if c.path.name == "config.toml"]
    assert change.after is not None
    return change.after


def test_layouts_lcm_cannot_edit_safely_are_refused() -> None:
    inline = 'mcp_servers.lcm = { command = "lcm", args = ["mcp"] }\n'
    with pytest.raises(LcmError, match="by hand"):
        tomlkeys.remove(inline, [tomlkeys.Key(("mcp_servers", "lcm"), "command", "lcm")], "config")
    multiline = '[mcp_servers.lcm]\ncommand = "lcm"\nargs = [\n  "mcp",\n]\n'
    with pytest.raises(LcmError, match="by hand"):
        tomlkeys.remove(multiline, [tomlkeys.Key(("mcp_servers", "lcm"), "args", ["mcp"])], "config")
    keep = '[mcp_servers]\n\n[mcp_servers.lcm]\ncommand = "lcm"\n'
    assert tomllib.loads(tomlkeys.remove(keep, [tomlkeys.Key(("mcp_servers", "lcm"), "command", "lcm")],
                                         "config")) == {"mcp_servers": {}}
