"""``lcm sensitive`` through the real console entry point (subprocesses)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from tests.conftest import GITLEAKS_TOML, run_lcm, shared_testdata

from .corpus import corpus

SECRETS = {rule: (text, secret) for rule, text, secret in corpus(99)}


def test_test_shows_redacted_text_and_rules_never_the_secret(project: Path) -> None:
    text, secret = SECRETS["github-pat"]
    result = run_lcm("sensitive", "test", f"deploy with {text}", cwd=project)
    assert result.returncode == 0, result.stderr
    assert secret not in result.stdout + result.stderr
    assert "[REDACTED:github-pat]" in result.stdout
    assert "matched: github-pat" in result.stdout
    clean = run_lcm("sensitive", "test", "nothing to see", "--json", cwd=project)
    assert json.loads(clean.stdout) == {"redacted": "nothing to see", "rules": [], "redactions": {}}


def test_add_list_test_remove_project_pattern(project: Path) -> None:
    pattern = "acme_[0-9a-f]{12}"
    added = run_lcm("sensitive", "add", pattern, cwd=project)
    assert added.returncode == 0, added.stderr
    patterns_file = project / ".lcm" / "sensitive-patterns.txt"
    assert patterns_file.read_text() == pattern + "\n"
    assert oct(patterns_file.stat().st_mode & 0o777) == "0o600"
    listed = json.loads(run_lcm("sensitive", "list", "--json", cwd=project).stdout)
    assert [p["pattern"] for p in listed["patterns"]] == [pattern]
    assert {p["name"] for p in listed["rule_packs"]} == {"builtin", "sensitive-patterns"}
    tested = run_lcm("sensitive", "test", "id acme_0123456789ab here", "--json", cwd=project)
    assert json.loads(tested.stdout)["redactions"] == {"sensitive-pattern": 1}
    removed = run_lcm("sensitive", "remove", pattern, cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert patterns_file.read_text() == ""
    missing = run_lcm("sensitive", "remove", pattern, cwd=project)
    assert missing.returncode == 1 and "is not in" in missing.stderr and pattern not in missing.stderr


def test_add_refuses_invalid_and_structural_patterns_without_echoing_them(project: Path) -> None:
    invalid = run_lcm("sensitive", "add", "(hunter2secret", cwd=project)
    assert invalid.returncode != 0
    assert "not a valid RE2" in invalid.stderr and "hunter2secret" not in invalid.stderr
    assert "Traceback" not in invalid.stderr
    structural = run_lcm("sensitive", "add", "tool_result", cwd=project)
    assert structural.returncode != 0 and "structural" in structural.stderr
    assert not (project / ".lcm" / "sensitive-patterns.txt").exists()


def test_add_and_remove_global_pattern(project: Path, lcm_env: Path) -> None:
    pattern = "corp-[0-9]{8}"
    assert run_lcm("sensitive", "add", pattern, "--global", cwd=project).returncode == 0
    config = tomllib.loads((lcm_env / "config.toml").read_text())
    assert config["security"]["sensitive_patterns"] == [pattern]
    tested = run_lcm("sensitive", "test", "ticket corp-12345678", cwd=project)
    assert "corp-12345678" not in tested.stdout
    assert run_lcm("sensitive", "remove", pattern, "--global", cwd=project).returncode == 0
    assert "security" not in tomllib.loads((lcm_env / "config.toml").read_text())


def test_scan_reports_location_never_the_secret(project: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / ".git").mkdir()
    aws_text, aws = SECRETS["aws-access-key-id"]
    slack_text, slack = SECRETS["slack-token"]
    (tree / "notes.txt").write_text(f"first line\n  {aws_text}\n")
    (tree / "sub" / "s.jsonl").write_text('{"a":1}\n' + json.dumps({"t": slack_text}) + "\n")
    (tree / ".git" / "config").write_text(aws_text)  # never scanned
    (tree / "blob.bin").write_bytes(b"\x00\x01" + aws_text.encode())  # binary: skipped
    result = run_lcm("sensitive", "scan", str(tree), "--json", cwd=project)
    assert result.returncode == 1, result.stderr
    assert aws not in result.stdout and slack not in result.stdout
    report = json.loads(result.stdout)
    found = {(f["rule_id"], Path(f["file"]).name, f["line"], f["column"]) for f in report["findings"]}
    assert {("aws-access-key-id", "notes.txt", 2, 3 + aws_text.index(aws)),
            ("slack-token", "s.jsonl", 2, 1 + json.dumps({"t": slack_text}).index(slack))} <= found
    assert {name for _, name, _, _ in found} == {"notes.txt", "s.jsonl"}
    assert report["files_scanned"] == 2 and report["skipped_binary"] == 1
    text = run_lcm("sensitive", "scan", str(tree / "notes.txt"), cwd=project)
    assert text.returncode == 1 and "aws-access-key-id" in text.stdout and aws not in text.stdout


def test_scan_clean_tree_exits_zero_and_upstream_config(project: Path, tmp_path: Path) -> None:
    (tmp_path / "clean.md").write_text("# nothing here\n")
    assert run_lcm("sensitive", "scan", str(tmp_path / "clean.md"), cwd=project).returncode == 0
    text, secret = SECRETS["github-pat"]
    (tmp_path / "leak.txt").write_text(text + "\n")
    upstream = str(shared_testdata(GITLEAKS_TOML))
    leak = str(tmp_path / "leak.txt")
    result = run_lcm("sensitive", "scan", leak, "--gitleaks-config", upstream, "--json", cwd=project)
    assert result.returncode == 1 and secret not in result.stdout
    assert [f["rule_id"] for f in json.loads(result.stdout)["findings"]] == ["github-pat"]
    missing = run_lcm("sensitive", "scan", str(tmp_path / "nope"), cwd=project)
    assert missing.returncode == 1 and "no such file" in missing.stderr


def test_purge_needs_yes_then_removes_patterns(project: Path) -> None:
    assert run_lcm("sensitive", "add", "zz_[0-9]{5}", cwd=project).returncode == 0
    refused = run_lcm("sensitive", "purge", cwd=project)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert (project / ".lcm" / "sensitive-patterns.txt").exists()
    purged = run_lcm("sensitive", "purge", "--yes", cwd=project)
    assert purged.returncode == 0, purged.stderr
    assert not (project / ".lcm" / "sensitive-patterns.txt").exists()
    listed = json.loads(run_lcm("sensitive", "list", "--json", cwd=project).stdout)
    assert listed["patterns"] == []


def test_list_still_works_when_a_pattern_is_refused(project: Path) -> None:
    (project / ".lcm" / "sensitive-patterns.txt").write_text("(broken\n")
    listed = run_lcm("sensitive", "list", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert report["scrubber_version"] is None and "not a valid RE2" in report["error"]
    assert [p["pattern"] for p in report["patterns"]] == ["(broken"]
    refused = run_lcm("sensitive", "test", "anything", cwd=project)
    assert refused.returncode != 0 and "not a valid RE2" in refused.stderr


def _doctor_audit(project: Path) -> dict:
    """The doctor's sensitive_audit check, run in-process (``lcm doctor`` itself runs once below)."""
    from lcm_framework.app import App
    from lcm_framework.config import load_config
    from lcm_framework.diagnostics import check_scrub_audit
    from lcm_framework.kernel.plugins import build_plugins

    app = App(load_config(project=project, plugins=build_plugins()), build_plugins())
    try:
        check = check_scrub_audit(app, {})
    finally:
        app.close()
    return {"status": check.status, "detail": check.detail, "fix": check.fix}


def test_audit_finds_stored_matches_of_new_rules_and_doctor_says_when_one_is_due(project: Path, tmp_path: Path) -> None:
    from tests.ingest.support import claude_records, write_jsonl

    planted = "acme_0123456789ab"
    records = claude_records("audit-1", str(project), 2, text=f"ticket {planted}")
    src = write_jsonl(tmp_path / "src" / "s.jsonl", records)
    imported = run_lcm("import", str(src), "--json", cwd=project)
    assert imported.returncode == 0, imported.stderr
    doctor = run_lcm("doctor", "--json", cwd=project)
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "sensitive_audit"]
    assert check["status"] == "warn" and "no audit recorded" in check["detail"]  # data stored, never audited

    clean = run_lcm("sensitive", "audit", "--json", cwd=project)
    assert clean.returncode == 0, clean.stderr
    report = json.loads(clean.stdout)
    assert report["findings"] == []
    [scanned] = [p["scanned"] for p in report["projects"]]
    assert scanned["message"] >= 8 and scanned["part"] >= 8 and scanned["native"] >= 8
    assert _doctor_audit(project)["status"] == "ok"

    assert run_lcm("sensitive", "add", "acme_[0-9a-f]{12}", cwd=project).returncode == 0
    due = _doctor_audit(project)
    assert due["status"] == "warn" and "rules changed" in due["detail"] and due["fix"] == "lcm sensitive audit"

    found = run_lcm("sensitive", "audit", "--json", cwd=project)
    assert found.returncode == 1, found.stderr
    assert planted not in found.stdout + found.stderr
    findings = json.loads(found.stdout)["findings"]
    assert {f["kind"] for f in findings} >= {"message", "part", "native"}
    assert {f["rule_id"] for f in findings} == {json.loads(run_lcm(
        "sensitive", "list", "--json", cwd=project).stdout)["patterns"][0]["rule_id"]}
    assert all(f["record_id"] and f["field"] and f["line"] >= 1 and f["column"] >= 1 for f in findings)
    remaining = _doctor_audit(project)
    assert remaining["status"] == "warn" and f"{len(findings)} finding(s) still stored" in remaining["detail"]

    human = run_lcm("sensitive", "audit", "--all-projects", cwd=project)
    assert human.returncode == 1 and planted not in human.stdout
    assert f"finding(s) in {project}" in human.stdout and "native" in human.stdout
