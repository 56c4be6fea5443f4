"""Scrubbing fails closed: with no usable rule set nothing is stored, and the error names the cause.

A missing, unreadable or invalid ``security.gitleaks_config``, a rule that does not compile, a scrubber
plugin that is not loaded or whose rule-pack hook raises: ``lcm import`` and ``lcm memory add`` exit
non-zero naming the file and the problem and write nothing; a hook still exits 0 and its event waits
in the outbox (the daemon retries it, and imports it scrubbed once the configuration is fixed);
``lcm doctor`` fails its ``scrubber`` check; ``lcm sensitive list`` shows the error.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.config import load_config
from lcm_framework.errors import ScrubberError
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.outbox import Outbox, OutboxEvent, outbox_path
from lcm_framework.scrub import app_scrubber
from tests.conftest import run_lcm
from tests.daemon.support import DaemonProcess, free_port
from tests.ingest.support import claude_records, write_jsonl

from .corpus import corpus

PLANTED = corpus(seed=25)[:6]


def broken_config(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A ``security.gitleaks_config`` that cannot be used, and the words the error must hold."""
    path = tmp_path / "gitleaks.toml"
    if kind == "missing":
        return path, "No such file or directory"
    if kind == "unreadable":
        path.mkdir()  # reading a directory fails (permissions would not stop root)
        return path, "Is a directory"
    if kind == "invalid TOML":
        path.write_text('title = "ours"\n[[rules]\nid = "x"\n')
        return path, "is not valid TOML"
    path.write_text('[[rules]]\nid = "broken-rule"\nregex = "(unclosed"\n')
    return path, "not a valid RE2"


def planted_transcript(tmp_path: Path, project: Path) -> Path:
    records = [r for n, (_, text, _) in enumerate(PLANTED)
               for r in claude_records(f"fail-closed-{n}", str(project), 1, text=text)]
    return write_jsonl(tmp_path / "src" / "planted.jsonl", records)


def holds_a_secret(home: Path) -> bool:
    data = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file()) if home.exists() else b""
    return any(secret.encode() in data for _, _, secret in PLANTED)


@pytest.mark.parametrize("kind", ["missing", "unreadable", "invalid TOML", "rule that does not compile"])
def test_import_and_memory_add_refuse_with_a_broken_gitleaks_config(tmp_path: Path, lcm_env: Path,
                                                                    kind: str) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    path, problem = broken_config(tmp_path, kind)
    flag = ("--set", f"security.gitleaks_config={path}")
    imported = run_lcm(*flag, "import", str(planted_transcript(tmp_path, project)), "--json", cwd=project)
    assert imported.returncode != 0
    assert str(path) in imported.stderr and problem in imported.stderr, imported.stderr
    assert "Traceback" not in imported.stderr and "skipping plugin" not in imported.stderr
    added = run_lcm(*flag, "memory", "add", f"deploy with {PLANTED[0][2]}", cwd=project)
    assert added.returncode != 0 and problem in added.stderr, added.stderr
    assert not list(lcm_env.rglob("*.db")), "nothing may be written, not even an empty project"
    assert not holds_a_secret(lcm_env)
    listed = run_lcm(*flag, "sensitive", "list", "--json", cwd=project)
    report = json.loads(listed.stdout)
    assert report["scrubber_version"] is None and problem in report["error"] and str(path) in report["error"]
    doctor = run_lcm(*flag, "doctor", "--json", cwd=project)
    assert doctor.returncode != 0
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "scrubber"]
    assert check["status"] == "fail" and str(path) in check["detail"] and problem in check["detail"]


def test_no_rule_pack_at_all_is_refused(tmp_path: Path, lcm_env: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    off = {"LCM_DISABLE_PLUGINS": "gitleaks"}
    imported = run_lcm("import", str(planted_transcript(tmp_path, project)), cwd=project, env=off)
    assert imported.returncode != 0 and "no secret-scrubbing rule pack is active" in imported.stderr
    assert "LCM_DISABLE_PLUGINS" in imported.stderr
    assert not holds_a_secret(lcm_env)


class RaisingRulePacks:
    @hookimpl
    def lcm_register_rule_packs(self, register: Callable[[Any], None], config: Any) -> None:
        raise RuntimeError("the vendor rule feed is down")


class RaisingCommands:
    @hookimpl
    def lcm_register_commands(self, register: Callable[[Any], None]) -> None:
        raise RuntimeError("unrelated bug")


def test_a_plugin_whose_rule_packs_fail_is_fatal_an_unrelated_broken_plugin_is_a_warning(tmp_path: Path) -> None:
    config = load_config(project=tmp_path, plugins=build_plugins())
    err = io.StringIO()
    broken = build_plugins(extra=[("vendor_rules", RaisingRulePacks())], stderr=err)
    with pytest.raises(ScrubberError, match=r"plugin 'vendor_rules' .* could not register its rule packs: "
                                            r"RuntimeError: the vendor rule feed is down"):
        app_scrubber(config, broken)
    unrelated = build_plugins(extra=[("bad_commands", RaisingCommands())], stderr=err)
    unrelated.commands()
    assert "skipping plugin 'bad_commands'" in err.getvalue()
    assert app_scrubber(config, unrelated).rules  # the scrubber itself is fine


def _event(home: Path) -> OutboxEvent:
    with Outbox(outbox_path(home)) as box:
        (event,) = box.events()
    return event


def _wait(home: Path, done: Callable[[OutboxEvent], bool], timeout: float = 40.0) -> OutboxEvent:
    deadline = time.monotonic() + timeout
    while True:
        event = _event(home)
        if done(event) or time.monotonic() > deadline:
            return event
        time.sleep(0.2)


def test_a_hook_exits_0_and_its_event_waits_in_the_outbox_until_the_scrubber_works(tmp_path: Path,
                                                                                   lcm_env: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    transcript = planted_transcript(tmp_path, project)
    path, problem = broken_config(tmp_path, "invalid TOML")
    broken = {"LCM_SECURITY_GITLEAKS_CONFIG": str(path)}
    port = free_port()
    hook_env = {"LCM_HOME": str(lcm_env), "LCM_DAEMON_PORT": str(port), "LCM_DAEMON_AUTOSTART": "false"}
    payload = {"session_id": "fail-closed-0", "transcript_path": str(transcript), "cwd": str(project),
               "hook_event_name": "Stop"}
    daemon = DaemonProcess(lcm_env, port, env=broken).start()
    try:
        hooked = run_lcm("hook", "Stop", cwd=project, env={**hook_env, **broken}, input=json.dumps(payload))
        assert hooked.returncode == 0, hooked.stderr
        event = _wait(lcm_env, lambda e: e.attempts >= 1)
        assert event.attempts >= 1 and event.processed_at is None  # kept for a retry, not consumed
        assert not holds_a_secret(lcm_env)
        doctor = run_lcm("doctor", "--json", cwd=project, env={**hook_env, **broken})
        assert doctor.returncode != 0
        [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "scrubber"]
        assert check["status"] == "fail" and str(path) in check["detail"] and problem in check["detail"]
    finally:
        daemon.stop()
    fixed = DaemonProcess(lcm_env, port).start()  # the configuration is fixed: the retry imports, scrubbed
    try:
        event = _wait(lcm_env, lambda e: e.processed_at is not None)
        assert event.processed_at is not None and event.last_error != "ScrubberError", event
    finally:
        fixed.stop()
    assert list(lcm_env.rglob("lcm.db")) and not holds_a_secret(lcm_env)


def test_config_set_refuses_a_gitleaks_config_that_would_stop_every_write(tmp_path: Path) -> None:
    invalid = tmp_path / "invalid.toml"
    invalid.write_text("[[rules]]\nid = 'x'\nregex = '(unclosed'\n")
    good = tmp_path / "good.toml"
    good.write_text("[[rules]]\nid = 'team-token'\nregex = 'team_[a-z0-9]{20}'\n")
    for value, why in ((str(tmp_path / "absent.toml"), "cannot read"), ("../rules.toml", "absolute path"),
                       (str(invalid), "invalid.toml")):
        refused = run_lcm("config", "set", "security.gitleaks_config", value, cwd=tmp_path)
        assert refused.returncode == 2 and why in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    listed = run_lcm("config", "get", "security.gitleaks_config", cwd=tmp_path)
    assert listed.stdout.strip() == "(unset)", listed.stdout  # nothing was written
    assert run_lcm("config", "set", "security.gitleaks_config", str(good), cwd=tmp_path).returncode == 0
