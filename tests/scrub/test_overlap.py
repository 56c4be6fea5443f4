"""A match that an allowlist or the entropy check refuses never hides a real secret that overlaps it.

gitleaks resumes its search at the end of every match, so in ``secret=example.token=<token>`` the
allowlisted first match swallows the token. LCM resumes one byte after a refused match's start, so the
token is found, redacted in text and records, and reported by ``findings``.
"""

from __future__ import annotations

import pytest

from lcm_framework.extensions import Allowlist, Rule, RulePack
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
