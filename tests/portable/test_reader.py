"""The portable-record reader: whatever a line holds, a checked record or a RecordFormatError naming it."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_framework.portable.reader import lines, read_header, read_record
from lcm_framework.portable.records import RecordFormatError, with_digest
from tests.portable.kit import HEADER, conversation, large_file, memory, project, summary

GOOD = [project("/srv/app"), conversation(files=[large_file("x" * 200)],
                                          summaries=[summary("sum_0123456789abcdef", "s", [0])]),
        memory("Use cursors")]


def edited(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``record`` (without its digest) with ``changes`` at dotted paths (``a__0__b``)."""
    copy = json.loads(json.dumps({k: v for k, v in record.items() if k != "digest"}))
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = copy
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return copy


def line(record: dict[str, Any], **changes: Any) -> str:
    """``record`` with ``changes`` and its digest recomputed: what an editor of the file makes."""
    return json.dumps(with_digest(edited(record, **changes)))


def refusal(text: str, number: int = 3) -> str:
    with pytest.raises(RecordFormatError) as caught:
        read_record(text, number)
    assert str(caught.value).startswith(f"line {number}: ")
    return str(caught.value)


def test_good_records_are_read_back_unchanged() -> None:
    for record in GOOD:
        assert read_record(json.dumps(record), 2) == record


@pytest.mark.parametrize(("changes", "expected"), [
    ({"messages": "hello"}, "conversation.messages: expected a list"),
    ({"messages__0__seq": "0"}, "conversation.messages[0].seq: expected an integer"),
    ({"messages__0__seq": True}, "conversation.messages[0].seq: expected an integer"),
    ({"messages__0__seq": -1}, "conversation.messages[0].seq: expected an integer"),
    ({"messages__0__seq": 1 << 70}, "conversation.messages[0].seq: expected an integer"),
    ({"messages__0__content": 42}, "conversation.messages[0].content: expected a string"),
    ({"messages__0__role": "root"}, "conversation.messages[0].role: expected"),
    ({"messages__0__created_at": "yesterday"}, "created_at: expected an ISO 8601 timestamp"),
    ({"messages__0__created_at": "2026-03-01T09:00:00"}, "with a time zone"),
    ({"files__0__file_id": "../../x"}, "conversation.files[0].file_id: expected a file id"),
    ({"files__0__file_id": "file_0123456789ABCDEF"}, "expected a file id"),
    ({"files__0__file_id": "file_0123456789abcdef"}, "conversation.files[0].file_id is not the id of its content"),
    ({"files__0__sha256": "00"}, "conversation.files[0].sha256: expected 64 hex digits"),
    ({"summaries__0__summary_id": "sum_/etc/passwd"}, "expected a summary id"),
    ({"summaries__0__source_seqs": [7]}, "source_seqs names a message the record lacks"),
    ({"summaries__0__parent_ids": ["sum_0000000000000000"]}, "parent_ids names a summary not listed before it"),
    ({"context": [["message", 9]]}, "conversation.context[0] names a message the record lacks"),
    ({"context": [["summary"]]}, "conversation.context[0]: expected a list of 2"),
    ({"title": ["a"]}, "conversation.title: expected a string"),
])
def test_a_conversation_field_of_the_wrong_type_or_shape_is_named(changes: dict[str, Any], expected: str) -> None:
    assert expected in refusal(line(GOOD[1], **changes))


@pytest.mark.parametrize(("changes", "expected"), [
    ({"confidence": float("nan")}, "not a number"),
    ({"confidence": 7}, "memory.confidence: expected a number in 0..1"),
    ({"tags": "api"}, "memory.tags: expected a list"),
    ({"lineage__extra": []}, "memory.lineage.extra: expected an object"),
    ({"lineage__messages": [["s", 0]]}, "memory.lineage.messages[0]: expected a list of 3"),
    ({"recall__surfacings": [[1, "2026-03-01T09:00:00+00:00"]]}, "memory.recall.surfacings[0][0]: expected a string"),
    ({"archived": "no"}, "memory.archived: expected true or false"),
])
def test_a_memory_field_of_the_wrong_type_is_named(changes: dict[str, Any], expected: str) -> None:
    assert expected in refusal(line(GOOD[2], **changes))


@pytest.mark.parametrize("root", ["../../etc", "etc", "/srv/app/../../etc", "/srv//app", "/srv/app/", None, 7])
def test_a_project_root_must_be_an_absolute_normalized_path(root: Any) -> None:
    assert "project.root: expected an absolute, normalized path" in refusal(line(GOOD[0], root=root), 2)


def test_missing_key_surrogate_nesting_and_numbers_are_refused() -> None:
    assert "conversation.native is missing" in refusal(json.dumps(with_digest(
        {k: v for k, v in GOOD[1].items() if k not in ("native", "digest")})))
    assert "lone surrogate" in refusal(_dump({**GOOD[2], "content": "\ud800"}))
    assert "nested deeper than 64" in refusal(line(GOOD[2], lineage__extra={"a": json.loads("[" * 80 + "]" * 80)}))
    assert "nested deeper" in refusal("[" * 100_000 + "]" * 100_000)
    assert "a number too long" in refusal('{"type": "memory", "n": ' + "9" * 5000 + "}")
    assert "out of range" in refusal('{"type": "memory", "n": 1e999}')
    assert "Infinity is not a number" in refusal('{"type": "memory", "n": Infinity}')
    assert "not a record" in refusal("[1, 2]")
    assert "not JSON" in refusal("{")


def test_the_digest_is_required_and_must_match() -> None:
    bare = {k: v for k, v in GOOD[2].items() if k != "digest"}
    assert "has no digest" in refusal(json.dumps(bare))
    assert "does not match its digest" in refusal(json.dumps({**GOOD[2], "content": "edited"}))


@pytest.mark.parametrize(("version", "expected"), [
    (-7, "positive integer"), (0, "positive integer"), (True, "positive integer"), ("1", "positive integer"),
    (1.0, "positive integer"), (99, "upgrade LCM"),
])
def test_the_header_version_must_be_a_positive_integer_this_lcm_reads(version: Any, expected: str) -> None:
    with pytest.raises(RecordFormatError, match=expected):
        read_header(json.dumps({**HEADER, "version": version}))
    assert read_header(json.dumps(HEADER))["version"] == 1


def test_a_line_that_is_not_utf8_is_named() -> None:
    stream = io.BytesIO(json.dumps(HEADER).encode() + b"\n" + json.dumps(GOOD[0]).encode() + b"\n\xff\xfe{}\n")
    read = lines(stream)
    assert [n for n, _ in (next(read), next(read))] == [1, 2]
    with pytest.raises(RecordFormatError, match="line 3 is not UTF-8"):
        next(read)


# --- fuzzing -------------------------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=20)
_SCALAR = st.none() | st.booleans() | st.integers(min_value=-(1 << 80), max_value=1 << 80) | \
    st.floats(allow_nan=True, allow_infinity=True) | _TEXT
_JSON = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=20)
_FIELDS = sorted({key for record in GOOD for key in record} | {"messages__0__parts", "files__0__content",
                                                             "lineage__extra", "recall__surfacings"})


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)  # lone surrogates become \ud800 escapes, NaN becomes NaN


def _outcome(text: str) -> None:
    """The documented result: a dict, or RecordFormatError naming the line. Anything else fails the test."""
    try:
        assert isinstance(read_record(text, 5), dict)
    except RecordFormatError as exc:
        assert str(exc).startswith("line 5: ")


FUZZ = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.sampled_from(GOOD), st.sampled_from(_FIELDS), _JSON, st.booleans())
def test_fuzz_a_record_with_one_field_replaced(record: dict[str, Any], field: str, value: Any,
                                                redigest: bool) -> None:
    try:
        changed = edited(record, **{field: value})
    except (KeyError, IndexError, TypeError, ValueError):
        changed = {**record, field: value}  # the path is not in this record: a new key at the top
    try:
        changed["digest"] = with_digest(changed)["digest"] if redigest else record["digest"]
    except UnicodeEncodeError:  # a lone surrogate: no digest can be computed, the stale one stays
        changed["digest"] = record["digest"]
    _outcome(_dump(changed))


@FUZZ
@given(_JSON, st.integers(min_value=0, max_value=3))
def test_fuzz_any_json_value_on_a_line(value: Any, wrap: int) -> None:
    for _ in range(wrap):
        value = {"type": "memory", "digest": "0" * 64, "content": value} if wrap % 2 else [value]
    _outcome(_dump(value))


@FUZZ
@given(st.binary(max_size=200), st.sampled_from(["", "[", "{\"type\":", "\"\\ud8", "1e"]))
def test_fuzz_raw_bytes_on_a_line(data: bytes, prefix: str) -> None:
    try:
        for number, text in lines(io.BytesIO(prefix.encode() + data)):
            _outcome(text)
            if number == 1:
                read_header(text)
    except RecordFormatError:
        pass


def test_huge_values_are_read_or_refused_quickly() -> None:
    big = line(GOOD[1], messages__0__content="x" * 5_000_000)
    assert read_record(big, 2)["messages"][0]["content"] == "x" * 5_000_000
    assert "nested deeper" in refusal('{"type":"memory","x":' + "[" * 5000 + "]" * 5000 + "}")
