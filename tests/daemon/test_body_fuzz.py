"""Fuzzing the daemon's request parsing (bounded, seeded): any body gives checked values whose text the
storage can hold, or ``BadRequest`` with a 4xx status: never another error (which would be a 500)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lcm_framework.daemon.bodies import BadRequest, Field, parse_json_object, validate

TEXT = st.text(st.characters(codec=None, categories=("L", "N", "P", "S", "Zs", "Cc", "Cs")), max_size=30)
FIELDS = [Field("project", Path, required=True), Field("session_id", str), Field("budget_tokens", int, minimum=1),
          Field("wait", bool), Field("payload", dict), Field("mode", str, choices=("incremental", "full"))]
KEYS = st.sampled_from([f.name for f in FIELDS]) | TEXT
LEAVES = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10**100, max_value=10**400)
          | st.floats(allow_nan=True, allow_infinity=True) | TEXT | st.just("/tmp/x") | st.just("relative"))
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                      max_leaves=20)
FUZZ = settings(max_examples=100, derandomize=True, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def outcome(raw: bytes, *, allow_extra: bool) -> None:
    try:
        checked = validate(parse_json_object(raw), FIELDS, allow_extra=allow_extra)
    except BadRequest as exc:
        assert 400 <= exc.status < 500
        return
    json.dumps(checked, default=str, ensure_ascii=False).encode("utf-8")  # every text is valid Unicode


@FUZZ
@given(st.dictionaries(KEYS, VALUES, max_size=8), st.booleans())
@example({"project": "/tmp", "session_id": "\ud800"}, False)
@example({"project": "/tmp", "payload": {"cwd": "/\udfff"}}, True)
@example({"project": "/tmp", "\ud800": 1}, True)
def test_any_json_object_gives_checked_values_or_bad_request(body: dict[str, object], allow_extra: bool) -> None:
    outcome(json.dumps(body).encode(), allow_extra=allow_extra)


@FUZZ
@given(st.binary(max_size=200) | VALUES.map(lambda v: json.dumps(v).encode()))
@example(b"[" * 100_000)
@example(b'{"project": "/tmp", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
@example(b'{"project": "/tmp", "x": ' + b"[" * 40 + b"]" * 40 + b"}")
@example(b'{"project": "/tmp", "budget_tokens": 1' + b"0" * 5000 + b"}")
@example(b'{"project": "/tmp", "budget_tokens": NaN}')
def test_any_bytes_give_checked_values_or_bad_request(raw: bytes) -> None:
    outcome(raw, allow_extra=True)
