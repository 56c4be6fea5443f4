"""Property tests: safe JSON round-trips; every injected defect is rejected with its reason, nothing else."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_framework.transcripts.reader import (
    MAX_JSON_DEPTH,
    MAX_SAFE_INTEGER,
    ParsedRecord,
    Reason,
    RecordRejected,
    RejectedRecord,
    parse_record,
    read_records,
)

safe_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30)
safe_number = st.one_of(
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: not (f.is_integer() and abs(f) > MAX_SAFE_INTEGER)
    ),
)
scalar = st.one_of(st.none(), st.booleans(), safe_number, safe_text)
json_value = st.recursive(
    scalar,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(safe_text, children, max_size=5)),
    max_leaves=25,
)
json_object = st.dictionaries(safe_text, json_value, max_size=6)
small_object = st.dictionaries(safe_text, st.one_of(scalar, st.lists(scalar, max_size=3)), max_size=3)
FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(json_object, st.booleans())
def test_safe_objects_round_trip(value: dict[str, Any], ascii_only: bool) -> None:
    line = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    assert parse_record(line) == value
    [record] = list(read_records(io.BytesIO(line + b"\n")))
    assert isinstance(record, ParsedRecord) and record.value == value


def _expect(line: bytes, reason: Reason) -> None:
    try:
        parse_record(line)
    except RecordRejected as exc:
        assert exc.reason is reason, (line[:80], exc.reason)
    else:  # pragma: no cover - the assertion is the test
        raise AssertionError(f"accepted a defective line: {line[:80]!r}")
    records = list(read_records(io.BytesIO(b'{"ok":1}\n' + line + b'\n{"ok":2}\n')))
    assert [type(r) for r in records] == [ParsedRecord, RejectedRecord, ParsedRecord]
    assert isinstance(records[1], RejectedRecord) and records[1].reason is reason


def _inject(value: dict[str, Any], token: str) -> bytes:
    """Serialize ``value`` with ``token`` (raw JSON text) as the value of a new member."""
    body = json.dumps(value)
    sep = "," if value else ""
    return ("{" + '"injected":' + token + sep + body[1:]).encode("utf-8")


@FAST
@given(small_object, st.integers(MAX_SAFE_INTEGER + 1, 10**30), st.sampled_from(["{}", "{}.0", "{}e0", "-{}"]))
def test_unsafe_integers_rejected_in_every_spelling(value: dict[str, Any], big: int, spelling: str) -> None:
    _expect(_inject(value, spelling.format(big)), Reason.MALFORMED_JSON)


@FAST
@given(small_object, st.integers(17, 300))
def test_exponent_spellings_beyond_the_safe_range_rejected(value: dict[str, Any], exponent: int) -> None:
    _expect(_inject(value, f"1e{exponent}"), Reason.MALFORMED_JSON)


@FAST
@given(small_object, st.integers(1, 9), st.integers(18, 40))
def test_over_precise_decimals_rejected(value: dict[str, Any], lead: int, digits: int) -> None:
    _expect(_inject(value, f"{lead}." + "0" * digits + "1"), Reason.MALFORMED_JSON)


@FAST
@given(small_object, st.integers(0xD800, 0xDFFF), st.booleans())
def test_lone_surrogates_rejected(value: dict[str, Any], code: int, in_key: bool) -> None:
    escape = f'"\\u{code:04x}"'
    line = (
        ("{" + escape + ":1" + ("," if value else "") + json.dumps(value)[1:]).encode()
        if in_key
        else _inject(value, escape)
    )
    _expect(line, Reason.MALFORMED_JSON)


@FAST
@given(small_object, st.sampled_from(['"\\u0000"', '"a\\u0000b"']), st.booleans())
def test_nul_rejected_raw_or_escaped(value: dict[str, Any], token: str, raw: bool) -> None:
    line = _inject(value, token)
    if raw:
        line = line.replace(b"\\u0000", b"\x00")
    _expect(line, Reason.NUL_CHARACTER)


@FAST
@given(small_object.filter(bool), st.data())
def test_duplicate_names_rejected_also_after_escape_decoding(value: dict[str, Any], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(value)))
    escaped = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in name)
    line = ("{" + json.dumps(escaped)[:-1].replace("\\\\", "\\") + '":0,' + json.dumps(value)[1:]).encode()
    _expect(line, Reason.MALFORMED_JSON)


@FAST
@given(st.integers(MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 2000), st.sampled_from(["[]", "{}"]))
def test_deep_nesting_rejected(depth: int, kind: str) -> None:
    arrays = b"[" * depth + b"]" * depth
    line = arrays if kind == "[]" else b'{"a":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
    _expect(line, Reason.NESTING_TOO_DEEP)


@FAST
@given(scalar)
def test_scalars_rejected(value: Any) -> None:
    _expect(json.dumps(value).encode(), Reason.NON_CONTAINER_JSON)


@FAST
@given(small_object, st.integers(0, 200), st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80"]))
def test_invalid_utf8_rejected(value: dict[str, Any], where: int, bad: bytes) -> None:
    line = json.dumps(value).encode()
    cut = min(where, len(line))
    _expect(line[:cut] + bad + line[cut:], Reason.INVALID_UTF8)


@FAST
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_anything_else(blob: bytes) -> None:
    line = blob.replace(b"\n", b" ")
    try:
        value = parse_record(line)
    except RecordRejected as exc:
        assert isinstance(exc.reason, Reason)
    else:
        assert isinstance(value, dict | list)
    for record in read_records(io.BytesIO(blob)):
        assert isinstance(record, ParsedRecord | RejectedRecord)
