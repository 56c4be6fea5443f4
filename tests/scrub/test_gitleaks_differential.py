"""Differential: what the real gitleaks binary finds in planted records, the built-in pack redacts.

The oracle test (``test_upstream_oracle.py``) runs the upstream rules in our own engine and takes its
findings for gitleaks'. Here gitleaks itself judges (``gitleaks_binary.py``: the configured binary or
Debian's build): for every upstream rule, strings its regex matches (the oracle's hand-made examples and
``from_regex`` draws) are placed in Claude Code records (a user message, a shell command, a tool output,
a JSON object key), written as transcript files and scanned by ``gitleaks dir`` with the upstream
configuration. Every secret gitleaks reports must be absent from what the built-in pack stores of that
record, and ``lcm sensitive scan`` with the upstream rules must report the same findings gitleaks does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.plugin import builtin_pack
from lcm_scrub_gitleaks.scan import scan_paths

from lcm_framework.scrub import ScrubRejected, scrubber_from_packs
from tests.conftest import GITLEAKS_TOML, shared_testdata, skip_or_fail

from .gitleaks_binary import GitleaksUnavailable, ensure_gitleaks
from .test_upstream_oracle import HAND, fixed_constants, placements, python_regex

DRAWS = 8


def _draws(pattern: str) -> list[str]:
    """``DRAWS`` strings the rule's regex matches, the same in every run."""
    regex = python_regex(pattern)
    if regex is None:
        return []
    found: list[str] = []

    @settings(max_examples=DRAWS, derandomize=True, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(regex, fullmatch=True))
    def draw(example: str) -> None:
        found.append(example)

    with fixed_constants():
        draw()
    return found


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, int], dict[str, Any]]]:
    """A folder of transcript files, one per upstream rule, and each line's record by (file name, line)."""
    shared_testdata(GITLEAKS_TOML)
    folder = tmp_path_factory.mktemp("planted")
    records: dict[tuple[str, int], dict[str, Any]] = {}
    for rule in load_gitleaks_file(GITLEAKS_TOML, "upstream").rules:
        if not rule.regex:
            continue
        keyword = max(rule.keywords, key=len, default="")
        lines = []
        for example in [*HAND.get(rule.id, []), *_draws(rule.regex)]:
            if "\n" in example or "\r" in example:
                continue  # gitleaks reports a line; a secret spanning lines is the oracle's to check
            if keyword and keyword.lower() not in example.lower():
                example = f"{keyword}: {example}"  # gitleaks runs a rule only on text holding its keyword
            for record in placements(example):
                lines.append(_line(record))
                records[(f"{rule.id}.jsonl", len(lines))] = record
        (folder / f"{rule.id}.jsonl").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return folder, records


@pytest.fixture(scope="module")
def gitleaks_findings(planted: tuple[Path, dict[tuple[str, int], dict[str, Any]]]) -> list[dict[str, Any]]:
    folder, _records = planted
    try:
        binary = ensure_gitleaks()
    except GitleaksUnavailable as exc:
        skip_or_fail(f"no gitleaks binary: {exc}")
    report = folder.parent / f"{folder.name}-report.json"
    done = subprocess.run([str(binary), "dir", str(folder), "--config", str(GITLEAKS_TOML), "--no-banner",
                           "--exit-code", "0", "--report-format", "json", "--report-path", str(report),
                           "--log-level", "error"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    findings: list[dict[str, Any]] = json.loads(report.read_text() or "[]")
    return findings


def test_gitleaks_flags_planted_secrets_of_most_rules(gitleaks_findings: list[dict[str, Any]]) -> None:
    """The corpus exercises gitleaks: most upstream rules find their planted strings."""
    rules = {f["RuleID"] for f in gitleaks_findings}
    assert len(rules) >= 200, f"gitleaks flagged planted strings of only {len(rules)} rules"


def test_the_builtin_pack_redacts_every_secret_gitleaks_finds(
    planted: tuple[Path, dict[tuple[str, int], dict[str, Any]]], gitleaks_findings: list[dict[str, Any]]
) -> None:
    _folder, records = planted
    builtin = scrubber_from_packs([builtin_pack()])
    survived = []
    for finding in gitleaks_findings:
        record = records[(Path(finding["File"]).name, finding["StartLine"])]
        try:
            stored = _line(builtin.scrub_record(record).value)
        except ScrubRejected as exc:
            survived.append(f"{finding['RuleID']}: refused instead of redacted ({exc.reason.value})")
            continue
        secret = finding["Secret"]
        if secret in stored or json.dumps(secret, ensure_ascii=False)[1:-1] in stored:
            survived.append(f"{finding['RuleID']}: {secret!r} survived in {stored[:300]!r}")
    assert not survived, f"{len(survived)} of {len(gitleaks_findings)} findings survived:\n" + "\n".join(survived[:40])


def test_lcm_sensitive_scan_with_the_upstream_rules_finds_what_gitleaks_finds(
    planted: tuple[Path, dict[tuple[str, int], dict[str, Any]]], gitleaks_findings: list[dict[str, Any]]
) -> None:
    folder, _records = planted
    ours = scan_paths(scrubber_from_packs([load_gitleaks_file(GITLEAKS_TOML, "upstream")]), [folder])
    theirs = {(Path(f["File"]).name, f["StartLine"], f["RuleID"]) for f in gitleaks_findings}
    found = {(f.file.name, f.line, f.rule_id) for f in ours.findings}
    assert not theirs - found, f"gitleaks found, lcm did not: {sorted(theirs - found)[:20]}"
    assert not found - theirs, f"lcm found, gitleaks did not: {sorted(found - theirs)[:20]}"
