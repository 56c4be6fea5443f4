"""Where a rule applies: a path-scoped rule only to a scanned file whose path matches, and a rule anchored to
the start of the text (``\\A``) to each string of a record on its own."""

from __future__ import annotations

from lcm_framework.kernel.extensions import Rule, RulePack
from lcm_framework.scrub import scrubber_from_packs

TOKEN = "Zk39fQ2xLp8sVb7Rt1Wn"


def test_a_path_scoped_rule_applies_only_to_a_matching_file() -> None:
    rule = Rule(id="tf-token", regex=r"token = \"([A-Za-z0-9]{20})\"", keywords=("token",), path=r"\.tf$")
    scrubber = scrubber_from_packs([RulePack("path-test", (rule,))])
    text = f'token = "{TOKEN}"'
    assert scrubber.findings(text) == []  # transcript text has no path
    assert scrubber.scrub_text(text) == (text, {})
    assert scrubber.scrub_record({"type": "user", "message": {"content": text}}).redactions == {}
    assert [f.rule_id for f in scrubber.scan_bytes(text.encode(), "infra/main.tf")] == ["tf-token"]
    assert scrubber.scan_bytes(text.encode(), "infra/main.py") == []


def test_a_rule_anchored_at_the_start_redacts_a_record_string_that_starts_with_its_secret() -> None:
    """``\\A`` means the start of each string: a record's strings are never matched as one joined text."""
    rule = Rule(id="anchored", regex=r"\Atoken=([A-Za-z0-9]{20})", keywords=("token",))
    scrubber = scrubber_from_packs([RulePack("anchor-test", (rule,))])
    record = {"type": "user", "message": {"content": "deploying now", "note": f"token={TOKEN}"}}
    scrubbed = scrubber.scrub_record(record)
    assert scrubbed.value["message"]["note"] == "token=[REDACTED:anchored]"
    assert scrubbed.redactions == {"anchored": 1}
    assert scrubber.scrub_text(f"later token={TOKEN}") == (f"later token={TOKEN}", {})  # not at the start
