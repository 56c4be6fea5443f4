"""The reader's fast path (a line orjson writes back byte for byte) decides exactly as the full check does."""

from __future__ import annotations

from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_framework.transcripts import reader
from lcm_framework.transcripts.reader import MAX_SAFE_INTEGER, RecordRejected, parse_record
from tests.conftest import CLAUDE_SESSIONS, shared_testdata

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
number = st.one_of(
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.integers(-(2**63), 2**64 - 1),  # what orjson writes
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([2**53, -(2**53), 2**53 - 1, 2.0**50 + 0.25, 1e16, 1e-7, 1e-5, 5e-324, -0.0, 2.0**53]),
)
value = st.recursive(
    st.none() | st.booleans() | number | text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=20,
)
container = st.lists(value, max_size=4) | st.dictionaries(text, value, max_size=4)
MANY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(line: bytes) -> tuple[str, Any]:
    try:
        parsed = parse_record(line)
    except RecordRejected as exc:
        return "rejected", exc.reason
    return "accepted", repr(parsed)  # repr: 1 and 1.0, 0.0 and -0.0 differ


def _full_check(line: bytes) -> tuple[str, Any]:
    with mock.patch.object(reader, "_canonical_value", return_value=None):
        return _outcome(line)


@MANY
@given(container)
def test_lines_as_orjson_writes_them_are_decided_as_the_full_check_decides(native: Any) -> None:
    line = orjson.dumps(native)
    assert _outcome(line) == _full_check(line)


@MANY
@given(st.dictionaries(text, value, min_size=1, max_size=4), st.data())
def test_a_duplicate_member_in_a_compact_line_is_rejected(native: dict[str, Any], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(native)))
    line = orjson.dumps(native)
    duplicated = line[:-1] + b"," + orjson.dumps(name) + b":" + orjson.dumps(native[name]) + b"}"
    assert _outcome(duplicated) == ("rejected", reader.Reason.MALFORMED_JSON) == _full_check(duplicated)


@pytest.mark.parametrize("line", [b'{"a":[1.5]}', b'{"a":1e+20}', b'[1,2.5e-7]', b'{"a":{"b":0.1}}'])
def test_a_float_sends_a_compact_line_to_the_full_check(line: bytes) -> None:
    assert reader._canonical_value(line) is None


def test_real_sessions_take_the_fast_path() -> None:
    """Every line of the real sessions is decided by the fast path, with the value the full check reads."""
    lines = [line for path in sorted(shared_testdata(CLAUDE_SESSIONS).glob("*.jsonl"))
             for line in path.read_bytes().splitlines() if line.strip()]
    assert len(lines) > 100
    slow = [line[:80] for line in lines if reader._canonical_value(line) is None]
    assert not slow, f"{len(slow)} of {len(lines)} lines left the fast path, e.g. {slow[:3]}"
    assert all(repr(reader._canonical_value(line)) == _full_check(line)[1] for line in lines)
