"""A keyword inside the formats' structural keys (``token`` in ``input_tokens``) selects no rule by itself,
and that never lets a secret through: the rules still run as soon as the keyword occurs anywhere else."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_framework.scrub import Scrubber, ScrubRejected
from lcm_framework.scrub.scrubber import canonical_bytes

from .corpus import B62, Gen

USAGE = {"input_tokens": 6, "cache_creation_input_tokens": 304, "cache_read_input_tokens": 15550,
         "cache_creation": {"ephemeral_5m_input_tokens": 304, "ephemeral_1h_input_tokens": 0}, "output_tokens": 30}


def _assistant(text: str, usage: Any = USAGE) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                                             "usage": usage}}


def _secret() -> str:
    return Gen(16).of(B62, 24) + "7q"


def test_usage_counters_select_no_rule(builtin_scrubber: Scrubber) -> None:
    record = _assistant("The build is green.")
    scanner = builtin_scrubber._scanner  # the candidate rules are what the keyword scan decides
    data = canonical_bytes(record)
    assert scanner.candidates(data)  # "token" is in the text the scan sees...
    assert scanner.candidates(data, record=True) == []  # ...but only inside structural keys holding numbers
    assert builtin_scrubber.scrub_record(record).redactions == {}


@pytest.mark.parametrize(
    "text",
    [
        "export API_TOKEN={}",  # the keyword in the text as well
        "refresh_token: {}",
        "to\u212aen = {}",  # KELVIN SIGN: RE2 folds it with "k", so the rule must still run
    ],
)
def test_a_secret_next_to_usage_counters_is_redacted(builtin_scrubber: Scrubber, text: str) -> None:
    secret = _secret()
    scrubbed = builtin_scrubber.scrub_record(_assistant(text.format(secret)))
    assert secret not in scrubbed.canonical_json
    assert scrubbed.redactions


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": "{}"},  # a structural key holding a string keeps its keyword
        {"output_tokens": 1, "prefix\"input_tokens": "{}"},  # a key that only ends with a structural one
        {"input_tokens": {"nested_token": "{}"}},
    ],
)
def test_a_secret_under_a_structural_key_is_never_stored(builtin_scrubber: Scrubber, usage: Any) -> None:
    secret = _secret()
    filled = {k: (v.format(secret) if isinstance(v, str) else
                  {kk: vv.format(secret) for kk, vv in v.items()} if isinstance(v, dict) else v)
              for k, v in usage.items()}
    try:
        scrubbed = builtin_scrubber.scrub_record(_assistant("ok", filled))
    except ScrubRejected:
        return  # refused (residual-secret) is safe too
    assert secret not in scrubbed.canonical_json


def test_a_secret_used_as_a_key_beside_usage_counters_is_caught(builtin_scrubber: Scrubber) -> None:
    secret = _secret()
    record = _assistant("ok", {**USAGE, f"api_token={secret}": 1})
    try:
        scrubbed = builtin_scrubber.scrub_record(record)
    except ScrubRejected:
        return
    assert secret not in scrubbed.canonical_json
