"""doctor, status and stats against real storage, real agent files and a real daemon."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.diagnostics import check_agents, check_outbox, check_summarizer, project_stats, run_checks
from lcm_framework.ingest import ingest_file
from lcm_framework.installer.agents import changes
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.outbox import Outbox, outbox_path
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SAMPLE_ID, run_lcm
from tests.daemon.support import DaemonProcess, free_port

SESSION = CLAUDE_SAMPLE_ID


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    shutil.copyfile(CLAUDE_SAMPLE, root / "s.jsonl")
    return root


def make_app(project: Path, **overrides: object) -> App:
    return App(load_config(project=project, overrides=overrides, plugins=build_plugins()), build_plugins())


def by_name(checks: list, name: str):  # type: ignore[no-untyped-def,type-arg]
    return next(c for c in checks if c.name == name)


def test_fresh_install_fails_on_hooks_and_says_how_to_fix(project: Path, lcm_env: Path) -> None:
    (lcm_env.parent / ".claude").mkdir()  # Claude Code is installed here, LCM's hooks are not
    app = make_app(project, **{"daemon.port": free_port(), "daemon.autostart": False})
    try:
        checks = run_checks(app, dict(os.environ))
    finally:
        app.close()
    assert by_name(checks, "storage").status == "ok"
    assert by_name(checks, "summarizer").status == "ok"
    hooks = by_name(checks, "claude_hooks")
    assert hooks.status == "fail" and hooks.fix == "lcm install claude"
    assert by_name(checks, "codex_hooks").status == "skip"
    daemon = by_name(checks, "daemon")
    assert daemon.status == "fail" and daemon.fix == "lcm daemon start"
    assert by_name(checks, "outbox").status == "ok"


def test_everything_green_with_hooks_installed_and_daemon_up(project: Path, lcm_env: Path) -> None:
    env = dict(os.environ)
    (lcm_env.parent / ".codex").mkdir()
    for agent in ("claude", "codex"):
        for change in changes(agent, env, install=True, plugins=build_plugins()):
            change.apply()
    port = free_port()
    daemon = DaemonProcess(lcm_env, port).start()
    try:
        result = run_lcm("--set", f"daemon.port={port}", "doctor", "--json", cwd=project)
    finally:
        daemon.stop()
    report = json.loads(result.stdout)
    failing = [c for c in report["checks"] if c["status"] == "fail"]
    assert result.returncode == (1 if failing else 0)
    names = {c["name"]: c["status"] for c in report["checks"]}
    assert names["claude_hooks"] == names["codex_hooks"] == names["daemon"] == names["storage"] == "ok"
    assert report["ok"] is (not failing)


def test_doctor_exit_code_and_text(project: Path, lcm_env: Path) -> None:
    (lcm_env.parent / ".claude").mkdir()
    result = run_lcm("--set", f"daemon.port={free_port()}", "--set", "daemon.autostart=false", "doctor",
                     cwd=project)
    assert result.returncode == 1
    assert "[FAIL] claude_hooks" in result.stdout and "fix: lcm install claude" in result.stdout
    assert "check(s) failed" in result.stdout


def test_summarizer_credentials_are_checked_never_printed(project: Path) -> None:
    app = make_app(project, **{"summarizer.provider": "litellm", "summarizer.model": "anthropic/claude-x"})
    try:
        missing = check_summarizer(app, {})
        present = check_summarizer(app, {"ANTHROPIC_API_KEY": "sk-ant-secret-value-123"})
    finally:
        app.close()
    assert "not registered" not in missing.detail, "the built-in litellm summarizer must be registered"
    assert missing.status == "fail" and "ANTHROPIC_API_KEY" in missing.detail
    assert missing.fix and "export ANTHROPIC_API_KEY" in missing.fix
    assert present.status == "ok" and present.data["provider"] == "anthropic"
    assert "sk-ant" not in repr(present) and "secret" not in repr(present)


def test_outbox_backlog_is_reported(project: Path, lcm_env: Path) -> None:
    app = make_app(project)
    try:
        assert check_outbox(app, {}).status == "ok"
        with Outbox(outbox_path(lcm_env)) as box:
            event = box.capture("Stop", {"session_id": "s"})
            assert check_outbox(app, {}).status == "warn"
            box.mark_failed(event.uuid, "storage_unavailable")
        failing = check_outbox(app, {})
    finally:
        app.close()
    assert failing.status == "fail" and "storage_unavailable" in failing.detail


def test_partial_hook_install_is_a_failure(project: Path, lcm_env: Path) -> None:
    settings = lcm_env.parent / ".claude" / "settings.json"
    for change in changes("claude", dict(os.environ), install=True, plugins=build_plugins()):
        change.apply()
    data = json.loads(settings.read_text())
    del data["hooks"]["PreCompact"]
    settings.write_text(json.dumps(data, indent=2))
    app = make_app(project)
    try:
        (claude, _codex) = check_agents(app, dict(os.environ))
    finally:
        app.close()
    assert claude.status == "fail" and "PreCompact" in claude.detail


def test_stats_and_status(project: Path, lcm_env: Path) -> None:
    app = make_app(project)
    try:
        report = ingest_file(app, project / "s.jsonl", project=project)
        assert report.error is None
        rows = project_stats(app)
    finally:
        app.close()
    (row,) = [r for r in rows if r["root"] == str(project)]
    assert row["conversations"] == 1 and row["messages"] == report.messages > 0
    assert isinstance(row["redactions"], dict)

    stats = run_lcm("stats", "--json", cwd=project)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["projects"][0]["messages"] == row["messages"]
    table = run_lcm("stats", cwd=project)
    assert "conversations" in table.stdout and str(project) in table.stdout

    status = run_lcm("--set", f"daemon.port={free_port()}", "status", cwd=project)
    assert status.returncode == 0, status.stderr
    assert "daemon:   not running" in status.stdout
    assert "projects: 1 stored" in status.stdout and "outbox:   0 pending" in status.stdout
