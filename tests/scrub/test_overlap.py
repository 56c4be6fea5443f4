"""A match that an allowlist or the entropy check refuses never hides a real secret that overlaps it.

gitleaks resumes its search at the end of every match, so in ``secret=example.token=<token>`` the
allowlisted first match swallows the token. LCM resumes one byte after a refused match's start, so the
token is found, redacted in text and records, and reported by ``findings``.
"""

from __future__ import annotations

import pytest

from lcm_framework.kernel.extensions import Allowlist, Rule, RulePack
from lcm_framework.scrub import Scrubber, scrubber_from_packs

TOKEN = "Zk39fQ2xLp8sVb7Rt1Wn"
RULE = Rule(id="assigned-secret", regex=r"(?:secret|token)=([A-Za-z0-9.=]{8,})", keywords=("secret", "token"),
            allowlists=(Allowlist(stopwords=("example",)),))
LOW_ENTROPY = Rule(id="assigned-secret", regex=r"(?:secret|token)=([A-Za-z0-9.=]{8,})",
                   keywords=("secret", "token"), entropy=4.1)


def _scrubber(rule: Rule) -> Scrubber:
    return scrubber_from_packs([RulePack("overlap-test", (rule,))])


@pytest.mark.parametrize(("rule", "text"), [
    (RULE, f"secret=example.token={TOKEN}"),  # refused by the allowlist (stopword)
    (LOW_ENTROPY, f"secret=aaaaaaaaaaaa.token={TOKEN}"),  # refused by entropy (4.03 bits; the token has 4.32)
])
def test_a_refused_match_does_not_hide_the_secret_overlapping_it(rule: Rule, text: str) -> None:
    scrubber = _scrubber(rule)
    [finding] = scrubber.findings(f"run {text} now")
    assert f"run {text} now"[finding.start:finding.end] == TOKEN
    scrubbed, counts = scrubber.scrub_text(f"run {text} now")
    assert scrubbed == f"run {text.replace(TOKEN, '[REDACTED:assigned-secret]')} now"
    assert counts == {"assigned-secret": 1}
    stored = scrubber.scrub_record({"type": "user", "message": {"content": f"run {text} now"}}).value
    assert TOKEN not in str(stored) and "[REDACTED:assigned-secret]" in str(stored)


def test_an_accepted_match_is_not_searched_again_inside() -> None:
    """After an accepted match the search resumes at its end: the secret is reported once, not re-matched."""
    text = f"token={TOKEN}token=abcdefghij"
    findings = _scrubber(RULE).findings(text)
    assert [text[f.start:f.end] for f in findings] == [f"{TOKEN}token=abcdefghij"]


def test_one_rules_redaction_never_hides_another_rules_secret() -> None:
    """Each rule searches the text as given: the second rule's match spans the first rule's secret, whose
    marker (with its ``[``) would break that match if the rules ran on each other's output."""
    first = Rule(id="first-key", regex=r"twitter=([A-Za-z0-9]{12})", keywords=("twitter",))
    second = Rule(id="second-token", regex=r"twitter[\w=]{0,30}:([A-Za-z0-9]{20})", keywords=("twitter",))
    scrubber = scrubber_from_packs([RulePack("cross-rule-test", (first, second))])
    text = f"twitter=Ab3dE5gH7jK9:{TOKEN}"
    assert sorted(f.rule_id for f in scrubber.findings(text)) == ["first-key", "second-token"]
    scrubbed, counts = scrubber.scrub_text(text)
    assert scrubbed == "twitter=[REDACTED:first-key]:[REDACTED:second-token]"
    assert counts == {"first-key": 1, "second-token": 1}
    stored = str(scrubber.scrub_record({"type": "user", "message": {"content": text}}).value)
    assert TOKEN not in stored and "Ab3dE5gH7jK9" not in stored


def test_a_secret_inside_one_already_redacted_is_counted_once() -> None:
    """Two rules flagging the same secret: the first rule's marker, one redaction."""
    general = Rule(id="general", regex=r"token=([A-Za-z0-9]{20})", keywords=("token",))
    scrubber = scrubber_from_packs([RulePack("same-secret-test", (RULE, general))])
    scrubbed, counts = scrubber.scrub_text(f"token={TOKEN}")
    assert scrubbed == "token=[REDACTED:assigned-secret]" and counts == {"assigned-secret": 1}
