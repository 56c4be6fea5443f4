"""The whole-record gate of ``scrub_record`` never lets a secret through: a rule that only matches a string on
its own (a line anchor, a neighbour that escaping changes) still redacts it, and a record is refused when its
canonical JSON alone holds a match."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_framework.kernel.extensions import Rule, RulePack
from lcm_framework.scrub import Scrubber, ScrubRejected, scrubber_from_packs
from lcm_framework.scrub.rules import compile_regex

SECRET = "tok_a1b2c3d4e5f6"


def _scrubber(regex: str) -> Scrubber:
    return scrubber_from_packs([RulePack("gate", (Rule(id="anchored", regex=regex, keywords=("tok_",)),))])


@pytest.mark.parametrize(
    "record",
    [
        {"text": SECRET},  # no escape anywhere: the gate reads the canonical JSON with its quotes as line breaks
        {"text": SECRET, "note": 'say "hi"\n'},  # escapes elsewhere: the gate reads the strings themselves
        {"text": f"first line\n{SECRET}"},  # the secret starts a line of its string
        [{"deep": [f"{SECRET}\ttab"]}],
    ],
)
def test_a_line_anchored_secret_is_redacted(record: Any) -> None:
    scrubbed = _scrubber(rf"(?m)^{SECRET[:4]}[a-f0-9]{{12}}\b").scrub_record(record)
    assert SECRET not in scrubbed.canonical_json
    assert scrubbed.redactions == {"anchored": 1}


def test_a_secret_only_the_unescaped_string_shows_is_redacted() -> None:
    """``\\b`` before the secret holds after a newline, not after the ``n`` of its escape."""
    scrubbed = _scrubber(rf"\b{SECRET[:4]}[a-f0-9]{{12}}").scrub_record({"text": f"x\n{SECRET}"})
    assert SECRET not in scrubbed.canonical_json


def test_a_match_of_the_canonical_json_alone_is_refused() -> None:
    scrubber = _scrubber(r'tok_"[:,]"[a-f0-9]{12}')  # quotes never stand unescaped inside a string
    with pytest.raises(ScrubRejected, match="residual-secret"):
        scrubber.scrub_record({"tok_": SECRET[4:]})


def test_a_record_the_rules_do_not_match_is_kept_as_it_is() -> None:
    record = {"text": "tok_ but nothing after it", "n": 1}
    scrubbed = _scrubber(rf"(?m)^{SECRET[:4]}[a-f0-9]{{12}}").scrub_record(record)
    assert scrubbed.value is record and scrubbed.redactions == {}


def test_a_span_regex_reports_the_whole_match_only() -> None:
    regex = compile_regex("(a)(b)", "a test regex", capture=False)
    assert regex.groups == 0
    assert regex.search(b"xab").span() == (1, 3)


def test_the_gate_compiles_each_rule_once_however_many_sets_of_candidates_occur(monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    """Records that select ever new sets of candidate rules cost no regex compilation once every rule's gate
    form is built: compiling one regex per set of candidates cost more than scrubbing itself on varied text."""
    import itertools

    from lcm_framework.scrub import scanner

    rules = tuple(Rule(id=f"r{i}", regex=rf"kw{i}_[a-f0-9]{{12}}", keywords=(f"kw{i}_",)) for i in range(6))
    scrubber = scrubber_from_packs([RulePack("many", rules)])
    compiled: list[str] = []
    real = scanner.compile_regex
    monkeypatch.setattr(scanner, "compile_regex", lambda *a, **k: compiled.append(a[0]) or real(*a, **k))
    sets = [combo for n in (1, 2, 3) for combo in itertools.combinations(range(6), n)]
    for combo in sets:  # 41 distinct sets of candidates, none of them matching
        scrubbed = scrubber.scrub_record({"text": " ".join(f"kw{i}_ only" for i in combo)})
        assert scrubbed.redactions == {}
    assert len(compiled) == len(rules)
    secret = scrubber.scrub_record({"text": "kw1_ kw4_0123456789ab"})
    assert secret.redactions == {"r4": 1} and len(compiled) == len(rules)
