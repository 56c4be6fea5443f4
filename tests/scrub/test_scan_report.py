"""``lcm sensitive scan`` reports what ``gitleaks dir`` reports: a generic rule's finding gives way to a
specific rule's on the same line whose secret holds it."""

from __future__ import annotations

from pathlib import Path

from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.scan import scan_paths

from lcm_framework.scrub import scrubber_from_packs

RULES = """
[[rules]]
id = "generic-assignment"
regex = '''key=([a-z0-9_]{10,30})'''
keywords = ["key="]

[[rules]]
id = "svc-token"
regex = '''(svc_[a-z0-9]{11})'''
keywords = ["svc_"]
"""


def test_a_generic_finding_gives_way_to_the_specific_one_on_its_line(tmp_path: Path) -> None:
    (tmp_path / "rules.toml").write_text(RULES)
    scrubber = scrubber_from_packs([load_gitleaks_file(tmp_path / "rules.toml", "test")])
    target = tmp_path / "files"
    target.mkdir()
    (target / "notes.txt").write_text("key=svc_abcdef12345\n"  # both rules, one secret: the specific one
                                      "key=plainvalue123\n"  # the generic rule alone
                                      "key=other_value_9 and svc_zyxwvu98765\n"  # two secrets: both reported
                                      "svc_qwerty54321\n")
    found = sorted((f.line, f.rule_id) for f in scan_paths(scrubber, [target]).findings)
    assert found == [(1, "svc-token"), (2, "generic-assignment"), (3, "generic-assignment"), (3, "svc-token"),
                     (4, "svc-token")]
