"""Oracle: whatever an upstream gitleaks rule flags, the built-in pack alone redacts.

For every rule of ``../shared/testdata/gitleaks/gitleaks.toml``, hypothesis
draws strings its regex matches (``from_regex`` on the regex translated to
Python's ``re``: ``[[:alnum:]]``, ``\\z`` and mid-pattern ``(?i)`` are
rewritten). When the match itself holds none of the rule's keywords, the longest
one (the service's name) is put before it as an assignment name (``airtable: pat...``): gitleaks
only runs a rule whose keyword is in the text. The string is then placed in a
user message, a shell command, a tool output and a JSON object key of a Claude
Code record; every secret the upstream rule reports in a placement (upstream
run by our engine, which gives gitleaks' findings; path-scoped rules apply to
any text here) must be gone from what the built-in pack stores.

Examples are bounded (``EXAMPLES`` per rule, derandomized) and each rule must
have all ``EXAMPLES`` of its drawn strings flagged by upstream (drawing goes on
past the ones upstream's own validation refuses); a rule for which fewer
validate uses the hand-made examples in ``HAND``. Derandomized is not enough to draw the
same strings in every run: hypothesis also draws string constants of the
project's modules that happen to be imported already, which depends on the
tests that ran before in the process; ``_fixed_constants`` turns that off.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from lcm_scrub_gitleaks.loader import load_gitleaks_file
from lcm_scrub_gitleaks.plugin import builtin_pack

from lcm_framework.kernel.extensions import RulePack
from lcm_framework.scrub import Scrubber, ScrubRejected, scrubber_from_packs
from tests.conftest import GITLEAKS_TOML, skip_or_fail

EXAMPLES = 8
HAND: dict[str, list[str]] = {
    "aws-amazon-bedrock-api-key-short-lived": ["bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"],  # a literal regex
}
"""Hand-made examples for upstream rules whose regex hypothesis cannot use or for which fewer than ``EXAMPLES``
drawn strings validate (a literal regex has one string)."""


def _upstream_ids() -> list[str]:
    if not GITLEAKS_TOML.is_file():
        return ["<upstream gitleaks.toml absent>"]
    return [r.id for r in load_gitleaks_file(GITLEAKS_TOML, "upstream").rules]


@pytest.fixture(scope="module")
def upstream_pack() -> RulePack:
    if not GITLEAKS_TOML.is_file():
        skip_or_fail(f"{GITLEAKS_TOML.parent} (shared test data) is absent")
    pack = load_gitleaks_file(GITLEAKS_TOML, "upstream")
    # a path-scoped rule (.tf, .yaml, nuget.config, .php) applies to any text here: transcripts have no paths
    rules = tuple(dataclasses.replace(r, path="") if r.regex else r for r in pack.rules)
    return dataclasses.replace(pack, rules=rules)


@pytest.fixture(scope="module")
def upstream(upstream_pack: RulePack) -> Scrubber:
    return scrubber_from_packs([upstream_pack])


@contextmanager
def fixed_constants() -> Iterator[None]:
    """No constants from whatever project modules are loaded: the draws depend on the seed alone.

    A private hook of hypothesis (there is no setting for it); if a release drops it, nothing is patched
    and the draws depend on the order of the tests again.
    """
    from hypothesis.internal.conjecture import providers

    if not (hasattr(providers, "_get_local_constants") and hasattr(providers, "CONSTANTS_CACHE")):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(providers, "_get_local_constants", providers.Constants)
        providers.CONSTANTS_CACHE.cache.clear()  # choices cached by earlier tests hold their constants
        try:
            yield
        finally:
            providers.CONSTANTS_CACHE.cache.clear()


@pytest.fixture(autouse=True)
def _fixed_constants() -> Iterator[None]:
    with fixed_constants():
        yield


@pytest.fixture(scope="module")
def builtin() -> Scrubber:
    return scrubber_from_packs([builtin_pack()])


def _scoped_flags(pattern: str) -> str:
    """Rewrite each ``(?i)`` after the start as ``(?i:...)`` up to the end of its group (what RE2 means by it).

    The flag holds across the group's later alternatives too, and a ``|`` keeps separating them: in
    ``(?:"(?i)A"|'B')`` the flag covers ``A"`` and ``'B'``, giving ``(?:"(?i:A")|(?i:'B'))``.
    """
    while (i := pattern.find("(?i)", 1)) >= 0:
        depth, j, escaped, in_class = 0, i + 4, False, False
        cuts = [i + 4]
        while j < len(pattern):
            c = pattern[j]
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif in_class:
                in_class = c != "]"
            elif c == "[":
                in_class = True
            elif c == "(":
                depth += 1
            elif c == "|" and depth == 0:
                cuts.append(j + 1)
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            j += 1
        alternatives = [pattern[start : end - 1] for start, end in zip(cuts, [*cuts[1:], j + 1], strict=True)]
        pattern = pattern[:i] + "|".join(f"(?i:{a})" for a in alternatives) + pattern[j:]
    return pattern


def python_regex(pattern: str) -> re.Pattern[str] | None:
    """The RE2 pattern as an ASCII Python regex, or None when Python cannot parse it."""
    pattern = _scoped_flags(pattern.replace("[[:alnum:]]", "[0-9A-Za-z]").replace("\\z", "\\Z"))
    try:
        return re.compile(pattern, re.ASCII)
    except re.error:
        return None


def placements(text: str) -> list[dict[str, Any]]:
    """The string in a user message, a shell command, a tool output and as a JSON object key."""
    return [
        {"type": "user", "message": {"role": "user", "content": f"please use {text} for the deploy"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "Bash",
             "input": {"command": f"cd /srv/app && echo {text} >> deploy.log", "description": "log it"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": f"step 1 ok\n{text}\nstep 3 ok"}]},
         "toolUseResult": {"stdout": f"step 1 ok\n{text}\nstep 3 ok", "stderr": ""}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "ok"}]},
         "toolUseResult": {"parsed": {text: "value", "other": 1}}},
    ]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def check(rule_id: str, example: str, upstream: Scrubber, builtin: Scrubber, keywords: tuple[str, ...]) -> bool:
    """True when upstream flags ``example``; then assert the built-in pack leaves none of its secrets."""
    if keywords and not any(k in example.lower() for k in keywords):
        example = f"{max(keywords, key=len)}: {example}"
    flagged = False
    for record in placements(example):
        found = [(text, text[f.start : f.end]) for text in set(_strings(record))
                 for f in upstream.findings(text) if f.rule_id == rule_id]
        secrets = {secret for _, secret in found}
        if not secrets or any(text.count(s) > found.count((text, s)) for text, s in found):
            continue  # no finding, or the secret's characters also occur elsewhere (in the name): not checkable
        flagged = True
        try:
            stored = builtin.scrub_record(record).value
        except ScrubRejected as exc:
            pytest.fail(f"{rule_id}: the built-in pack refused the record instead of redacting ({exc.reason.value})")
        for text in _strings(stored):
            for secret in secrets:
                assert secret not in text, f"{rule_id}: secret {secret!r} survived in {text!r}"
    return flagged


@pytest.mark.parametrize("rule_id", _upstream_ids())
def test_builtin_redacts_what_the_upstream_rule_flags(
    rule_id: str, upstream_pack: RulePack, upstream: Scrubber, builtin: Scrubber
) -> None:
    [rule] = [r for r in upstream_pack.rules if r.id == rule_id]
    if not rule.regex:  # a file-name rule
        assert builtin.path_findings("certs/client.p12"), f"{rule_id}: no built-in path rule flags a .p12 file"
        return
    keywords = tuple(k.lower() for k in rule.keywords)
    for example in HAND.get(rule_id, []):
        assert check(rule_id, example, upstream, builtin, keywords), f"{rule_id}: upstream ignores hand example"
    regex = python_regex(rule.regex)
    if regex is None:
        assert HAND.get(rule_id), f"{rule_id}: Python cannot parse its regex and HAND has no example for it"
        return
    if rule_id in HAND:
        return

    flagged: list[str] = []

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              phases=[Phase.generate],  # a failure reports the drawn string as it is: shrinking long tokens is slow
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.from_regex(regex, fullmatch=True))
    def drawn(example: str) -> None:
        checked = check(rule_id, example, upstream, builtin, keywords)
        if checked:
            flagged.append(example)
        assume(checked)

    drawn()
    assert len(flagged) == EXAMPLES, (f"{rule_id}: upstream flags {len(flagged)} of the drawn strings, not "
                                      f"{EXAMPLES}; give the rule examples in HAND")
