"""An independent reference for scrubbing: each gitleaks rule run with plain ``re`` and its own checks.

The oracle (``test_upstream_oracle.py``) takes the upstream rules run by our own scanner for gitleaks'
findings, so a bug in the scanner's search loop, secret-group choice, entropy or allowlist logic is in
both sides of its comparison. Here every rule of the upstream gitleaks configuration and of the built-in
pack is applied by ``reference_spans``, written from gitleaks' documented semantics without any code of
``lcm_framework.scrub``: Python's ``re`` over text, gitleaks' secret choice (``secretGroup``, else the
first non-empty group, else the whole match), Shannon entropy above the threshold (and a digit for the
``generic`` rules), allowlists (regexes on the secret, match or line; stopwords in the secret; OR / AND),
a rule run only when one of its keywords occurs. One rule is LCM's own, beyond gitleaks: after a match that
fails validation the search resumes one character after its start, so a refused match never hides a
secret overlapping it (gitleaks resumes at its end).

Texts per rule: strings drawn from the rule's regex, alone, two of them run together (one match may
overlap the next), and behind one of the rule's stopwords or after a refused low-entropy match (an
overlapping refused match before a real one). ``Scrubber.findings`` must report exactly the reference's
spans for the rule, and ``scrub_text`` must leave none of them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.plugin import builtin_pack

from lcm_framework.kernel.extensions import Allowlist, Rule, RulePack
from lcm_framework.scrub import Scrubber, scrubber_from_packs
from tests.conftest import GITLEAKS_TOML, skip_or_fail

from .test_upstream_oracle import fixed_constants, python_regex

DRAWS = 4
FOLDING = "\u017f\u212a"
"""Characters RE2's case folding matches with ASCII letters (``s``, ``k``) and Python's ASCII mode does not."""
UNPORTABLE = {"\x0b"}
"""``\\s`` of Python's ``re`` holds U+000B; RE2's does not."""


def _entropy(text: str) -> float:
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values()) if size else 0.0


def _secret(rule: Rule, m: re.Match[str]) -> tuple[int, int]:
    if rule.secret_group:
        return m.span(rule.secret_group)
    for group in range(1, (m.re.groups or 0) + 1):
        start, end = m.span(group)
        if end > start:
            return start, end
    return m.span()


def _allows(allow: Allowlist, secret: str, match: str, line: str) -> bool:
    target = {"match": match, "line": line}.get(allow.regex_target or "secret", secret)
    criteria = []
    if allow.regexes:
        criteria.append(any(_regex(p).search(target) for p in allow.regexes))
    if allow.stopwords:
        criteria.append(any(word.lower() in secret.lower() for word in allow.stopwords))
    if allow.paths:
        criteria.append(False)  # text has no path
    if not criteria:
        return False
    return all(criteria) if (allow.condition or "OR").upper() == "AND" else any(criteria)


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    compiled = python_regex(pattern)
    assert compiled is not None, "an allowlist regex Python cannot parse"
    return compiled


def _refused(rule: Rule, shared: Sequence[Allowlist], text: str, m: re.Match[str], span: tuple[int, int]) -> bool:
    secret = text[span[0]:span[1]]
    if rule.entropy:
        if _entropy(secret) <= rule.entropy:
            return True
        if rule.id.startswith("generic") and not any(c.isdigit() for c in secret):
            return True
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", m.end())
    line = text[line_start:line_end if line_end >= 0 else len(text)]
    return any(_allows(a, secret, m.group(), line) for a in (*shared, *rule.allowlists))


def reference_spans(rule: Rule, shared: Sequence[Allowlist], text: str) -> list[tuple[int, int]]:
    """The secrets ``rule`` finds in ``text``, as character spans in text order."""
    if rule.keywords and not any(k.lower() in text.lower() for k in rule.keywords):
        return []
    regex = _regex(rule.regex)
    spans: list[tuple[int, int]] = []
    pos = 0
    while pos <= len(text) and (m := regex.search(text, pos)) is not None:
        span = _secret(rule, m)
        if span[1] > span[0] and not _refused(rule, shared, text, m, span):
            spans.append(span)
            pos = max(m.end(), m.start() + 1)
        else:
            pos = m.start() + 1
    return spans


def _draws(pattern: str) -> list[str]:
    regex = python_regex(pattern)
    found: list[str] = []
    if regex is None:
        return found

    @settings(max_examples=DRAWS, derandomize=True, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(regex, fullmatch=True))
    def draw(example: str) -> None:
        if not (set(example) & UNPORTABLE or any(c in example for c in FOLDING) or example.endswith("\n")):
            found.append(example)

    with fixed_constants():
        draw()
    return found


def texts(rule: Rule, shared: Sequence[Allowlist]) -> list[str]:
    """The rule's drawn strings alone, run together, behind a stopword and behind a refused match."""
    keyword = max(rule.keywords, key=len, default="")
    drawn = [d if keyword.lower() in d.lower() else f"{keyword}: {d}" for d in _draws(rule.regex)]
    stopwords = [w for a in (*shared, *rule.allowlists) for w in a.stopwords][:2]
    out = list(drawn)
    for first, second in pairwise(drawn):
        out += [first + second, f"{first} {second}", first[: len(first) // 2] + second]
    for draw in drawn[:2]:
        out += [f"{word}{draw}" for word in stopwords]
        out.append(f"{keyword}=aaaaaaaaaaaaaaaa{draw}")
    return [t for t in out if not t.endswith("\n")]


def _packs() -> list[tuple[str, RulePack]]:
    packs = [("builtin", builtin_pack())]
    if GITLEAKS_TOML.is_file():
        upstream = load_gitleaks_file(GITLEAKS_TOML, "upstream")
        # a path-scoped rule applies to any text here (as in the oracle): transcripts have no paths
        rules = tuple(dataclasses.replace(r, path="") for r in upstream.rules if r.regex)
        packs.append(("upstream", dataclasses.replace(upstream, rules=rules)))
    return packs


PACKS = dict(_packs())
CASES = [(name, rule.id) for name, pack in PACKS.items() for rule in pack.rules if rule.regex]


@cache
def _scrubber(pack: str) -> Scrubber:
    return scrubber_from_packs([PACKS[pack]])


@pytest.mark.parametrize(("pack", "rule_id"), CASES)
def test_the_scanner_finds_what_the_reference_finds(pack: str, rule_id: str) -> None:
    if pack == "upstream" and not GITLEAKS_TOML.is_file():
        skip_or_fail(f"{GITLEAKS_TOML.parent} (shared test data) is absent")
    [rule] = [r for r in PACKS[pack].rules if r.id == rule_id]
    if python_regex(rule.regex) is None:
        pytest.skip("Python's re cannot parse this RE2 regex")  # counted by the test below
    shared = PACKS[pack].allowlists
    scrubber = _scrubber(pack)
    cases = texts(rule, shared)
    assert cases, f"{rule_id}: no string drawn from its regex"
    for text in cases:
        want = reference_spans(rule, shared, text)
        got = [(f.start, f.end) for f in scrubber.findings(text) if f.rule_id == rule_id]
        assert got == want, f"{rule_id} in {text!r}: scanner {got}, reference {want}"
        scrubbed, _counts = scrubber.scrub_text(text)
        for start, end in want:
            secret = text[start:end]
            if text.count(secret) == 1:
                assert secret not in scrubbed, f"{rule_id}: {secret!r} survived in {scrubbed!r}"


def test_the_reference_covers_nearly_every_rule() -> None:
    """Rules whose RE2 regex Python cannot parse are left to the oracle and the differential test."""
    unparsed = [(name, rule.id) for name, pack in PACKS.items() for rule in pack.rules
                if rule.regex and python_regex(rule.regex) is None]
    assert len(unparsed) <= len(CASES) // 50, unparsed


def test_the_reference_refuses_an_overlapped_match_like_the_scanner() -> None:
    """The overlap rule in the reference itself: a stopword refuses the first match, the token is found."""
    rule = Rule(id="overlap", regex=r"(?:secret|token)=([A-Za-z0-9.=]{8,})", keywords=("secret", "token"),
                allowlists=(Allowlist(stopwords=("example",)),))
    text = "secret=example.token=Zk39fQ2xLp8sVb7Rt1Wn"
    assert [text[s:e] for s, e in reference_spans(rule, (), text)] == ["Zk39fQ2xLp8sVb7Rt1Wn"]
