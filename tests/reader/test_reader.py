"""The strict JSONL reader: contract, reason codes, offsets, bounded memory, real sessions."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from lcm_framework.transcripts.reader import (
    MAX_JSON_DEPTH,
    MAX_RECORD_BYTES,
    ParsedRecord,
    Reason,
    RecordRejected,
    RejectedRecord,
    parse_record,
    read_records,
)
from tests.conftest import CLAUDE_SESSIONS, shared_testdata

REJECTED = [
    (b'{"a":1,"a":2}', Reason.MALFORMED_JSON),
    (b'{"a":1,"\\u0061":2}', Reason.MALFORMED_JSON),
    (b'[{"x":{"k":1,"k":1}}]', Reason.MALFORMED_JSON),
    (b"[9007199254740992]", Reason.MALFORMED_JSON),
    (b"[-9007199254740993]", Reason.MALFORMED_JSON),
    (b"[9007199254740993.0]", Reason.MALFORMED_JSON),
    (b"[1e16]", Reason.MALFORMED_JSON),
    (b"[1E+16]", Reason.MALFORMED_JSON),
    (b"[123456789012345678901234567890]", Reason.MALFORMED_JSON),
    (b"[0.1000000000000000055511151231257827]", Reason.MALFORMED_JSON),
    (b"[1.00000000000000001]", Reason.MALFORMED_JSON),
    (b"[1e400]", Reason.MALFORMED_JSON),
    (b"[1.7976931348623157e308]", Reason.MALFORMED_JSON),  # every double >= 2^53 is integer-valued
    (b"[1.5e300]", Reason.MALFORMED_JSON),
    (b"[1e-400]", Reason.MALFORMED_JSON),
    (b"[NaN]", Reason.MALFORMED_JSON),
    (b"[Infinity]", Reason.MALFORMED_JSON),
    (b"[-Infinity]", Reason.MALFORMED_JSON),
    (b'["\\ud800"]', Reason.MALFORMED_JSON),
    (b'["\\udc00x"]', Reason.MALFORMED_JSON),
    (b'{"\\uDBFF":1}', Reason.MALFORMED_JSON),
    (b'["\\u0000"]', Reason.NUL_CHARACTER),
    (b'{"a\\u0000":1}', Reason.NUL_CHARACTER),
    (b'["a\x00b"]', Reason.NUL_CHARACTER),
    (b'"scalar"', Reason.NON_CONTAINER_JSON),
    (b"42", Reason.NON_CONTAINER_JSON),
    (b"null", Reason.NON_CONTAINER_JSON),
    (b"[1,]", Reason.MALFORMED_JSON),
    (b"{'a': 1}", Reason.MALFORMED_JSON),
    (b"[1] [2]", Reason.MALFORMED_JSON),
    (b'["tab\there"]', Reason.MALFORMED_JSON),
    (b"\xef\xbb\xbf{}", Reason.MALFORMED_JSON),
    (b'["\xff"]', Reason.INVALID_UTF8),
    (b'["\xed\xa0\x80"]', Reason.INVALID_UTF8),  # a surrogate encoded as UTF-8
    (b'["\xc0\xaf"]', Reason.INVALID_UTF8),  # overlong
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x02\xff", Reason.BINARY_INPUT),
    (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), Reason.NESTING_TOO_DEEP),
    (b"[" * 5000 + b"]" * 5000, Reason.NESTING_TOO_DEEP),
    (b'{"a":' * 101 + b"1" + b"}" * 101, Reason.NESTING_TOO_DEEP),
]

ACCEPTED = [
    (b"[9007199254740991]", [9007199254740991]),
    (b"[-9007199254740991]", [-9007199254740991]),
    (b"[9007199254740991.0]", [9007199254740991.0]),
    (b"[1e15]", [1e15]),
    (b"[0.1, 1.5, -0.0, 5e-324, 1.5e-300, 12345.678]", [0.1, 1.5, -0.0, 5e-324, 1.5e-300, 12345.678]),
    (b"[1.50]", [1.5]),
    (b'["\\ud83d\\ude00", "\xf0\x9f\x98\x80"]', ["\U0001f600", "\U0001f600"]),
    (b'["\\\\u0000"]', ["\\u0000"]),
    (b'{"a":1,"b":{"a":2}}', {"a": 1, "b": {"a": 2}}),
    (b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH, None),
    (b"  {}  \r", {}),
    (b"[]", []),
]


@pytest.mark.parametrize(("line", "reason"), REJECTED)
def test_contract_rejections_carry_the_spec_reason(line: bytes, reason: Reason) -> None:
    with pytest.raises(RecordRejected) as info:
        parse_record(line)
    assert info.value.reason is reason
    assert reason.value in str(info.value)


@pytest.mark.parametrize(("line", "expected"), ACCEPTED)
def test_contract_accepts_safe_values(line: bytes, expected: object) -> None:
    value = parse_record(line)
    if expected is not None:
        assert value == expected


def test_rejection_message_never_echoes_content() -> None:
    with pytest.raises(RecordRejected) as info:
        parse_record(b'{"password":"hunter2-secret","password":"x"}')
    assert "hunter2" not in str(info.value)


def test_record_over_the_limit_is_rejected_by_parse_record() -> None:
    with pytest.raises(RecordRejected) as info:
        parse_record(b"[" + b"1," * (MAX_RECORD_BYTES // 2) + b"1]")
    assert info.value.reason is Reason.RECORD_TOO_LARGE


def test_offsets_ordinals_blank_lines_and_final_line_without_newline() -> None:
    data = b'{"a":1}\n\n   \n[2]\r\n{"bad"\n{"z":3}'
    records = list(read_records(io.BytesIO(data)))
    assert [(r.ordinal, r.start, r.end) for r in records] == [(0, 0, 8), (3, 13, 18), (4, 18, 25), (5, 25, 32)]
    assert [type(r) for r in records] == [ParsedRecord, ParsedRecord, RejectedRecord, ParsedRecord]
    assert isinstance(records[2], RejectedRecord) and records[2].reason is Reason.MALFORMED_JSON
    assert records[3].value == {"z": 3}  # type: ignore[union-attr]
    # every byte is accounted for: the last record ends at EOF
    assert records[-1].end == len(data)


def test_start_offset_and_first_ordinal_resume_mid_file() -> None:
    data = b'{"a":1}\n{"b":2}\n{"c":3}\n'
    records = list(read_records(io.BytesIO(data), start_offset=8, first_ordinal=1))
    assert [(r.ordinal, r.start, r.end) for r in records] == [(1, 8, 16), (2, 16, 24)]
    assert records[0].value == {"b": 2}  # type: ignore[union-attr]


def test_raw_digest_is_of_the_line_without_its_newline() -> None:
    import hashlib

    records = list(read_records(io.BytesIO(b'{"a":1}\n["x"\n')))
    assert records[0].raw_sha256 == hashlib.sha256(b'{"a":1}').hexdigest()
    assert records[1].raw_sha256 == hashlib.sha256(b'["x"').hexdigest()


def test_bad_lines_never_stop_the_good_ones() -> None:
    good = [json.dumps({"n": i}).encode() for i in range(5)]
    bad = [b"\xff\xfe", b"{", b"7", b'["\\u0000"]', b"[" * 200 + b"]" * 200]
    lines = [x for pair in zip(good, bad, strict=True) for x in pair]
    records = list(read_records(io.BytesIO(b"\n".join(lines) + b"\n")))
    assert [r.value for r in records if isinstance(r, ParsedRecord)] == [{"n": i} for i in range(5)]
    assert [r.reason for r in records if isinstance(r, RejectedRecord)] == [
        Reason.INVALID_UTF8,
        Reason.MALFORMED_JSON,
        Reason.NON_CONTAINER_JSON,
        Reason.NUL_CHARACTER,
        Reason.NESTING_TOO_DEEP,
    ]


class _CountingReader(io.RawIOBase):
    """A stream of one huge line then a good line, produced lazily (never in memory)."""

    def __init__(self, huge: int) -> None:
        self.remaining = huge
        self.tail = b'\n{"after":true}\n'
        self.biggest_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        self.biggest_read = max(self.biggest_read, len(buffer))
        if self.remaining:
            n = min(len(buffer), self.remaining)
            buffer[:n] = b"x" * n
            self.remaining -= n
            return n
        n = min(len(buffer), len(self.tail))
        buffer[:n] = self.tail[:n]
        self.tail = self.tail[n:]
        return n


def test_oversized_line_is_consumed_in_chunks_and_reading_goes_on() -> None:
    import tracemalloc

    huge = 3 * MAX_RECORD_BYTES
    stream = io.BufferedReader(_CountingReader(huge))
    tracemalloc.start()
    try:
        records = list(read_records(stream))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(records[0], RejectedRecord)
    assert records[0].reason is Reason.RECORD_TOO_LARGE
    assert (records[0].start, records[0].end) == (0, huge + 1)
    assert isinstance(records[1], ParsedRecord) and records[1].value == {"after": True}
    assert peak < 2.5 * MAX_RECORD_BYTES  # one bounded line buffer, never the 30 MiB line


def test_line_exactly_at_the_limit_is_parsed() -> None:
    body = b'["' + b"a" * (MAX_RECORD_BYTES - 4) + b'"]'
    assert len(body) == MAX_RECORD_BYTES
    records = list(read_records(io.BytesIO(body + b"\n" + body + b"x\n[1]")))
    assert isinstance(records[0], ParsedRecord)
    assert isinstance(records[1], RejectedRecord) and records[1].reason is Reason.RECORD_TOO_LARGE
    assert isinstance(records[2], ParsedRecord) and records[2].value == [1]


def test_real_claude_sessions_read_without_rejections() -> None:
    files = sorted(shared_testdata(CLAUDE_SESSIONS).glob("*.jsonl"))
    assert files
    for path in files:
        size = path.stat().st_size
        with path.open("rb") as fp:
            records = list(read_records(fp))
        assert records and all(isinstance(r, ParsedRecord) for r in records), path.name
        assert records[-1].end == size


def test_reads_a_real_file_descriptor(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n\xff\n[2]\n')
    with path.open("rb") as fp:
        reasons = [getattr(r, "reason", None) for r in read_records(fp)]
    assert reasons == [None, Reason.INVALID_UTF8, None]


def test_a_rejection_says_its_reason_and_never_the_record() -> None:
    """The message is what the quarantine and ``lcm import`` show: reason code and detail, no content."""
    secret_line = b'{"token":"Zk39fQ2xLp8sVb7Rt1Wn","token":"x"}'
    with pytest.raises(RecordRejected) as caught:
        parse_record(secret_line)
    assert str(caught.value) == "record rejected: malformed-json (duplicate member name)"
    assert caught.value.reason is Reason.MALFORMED_JSON and "Zk39" not in str(caught.value)
    with pytest.raises(RecordRejected) as caught:
        parse_record(b'{"a":"nul \\u0000 here"}')
    assert str(caught.value) == "record rejected: nul-character (escaped U+0000)"


@pytest.mark.parametrize(("controls", "reason"), [(2, Reason.INVALID_UTF8), (3, Reason.BINARY_INPUT)])
def test_an_undecodable_line_is_binary_above_one_control_byte_in_ten(controls: int, reason: Reason) -> None:
    line = b"\x01" * controls + b'{"a":"\xff"}'.ljust(20 - controls, b" ")
    assert len(line) == 20
    with pytest.raises(RecordRejected) as caught:
        parse_record(line)
    assert caught.value.reason is reason


def test_an_oversized_line_is_digested_whole_without_its_newline() -> None:
    """The quarantine's digest of a too-large record is the same rule as for any other: the line, no newline."""
    import hashlib

    big = b'{"a":"' + b"x" * (MAX_RECORD_BYTES + 3 * 1024 * 1024) + b'"}'
    records = list(read_records(io.BytesIO(big + b"\n[1]\n")))
    assert isinstance(records[0], RejectedRecord) and records[0].reason is Reason.RECORD_TOO_LARGE
    assert records[0].raw_sha256 == hashlib.sha256(big).hexdigest()
    assert (records[0].end, records[1].start) == (len(big) + 1, len(big) + 1)
