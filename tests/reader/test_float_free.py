"""A line the reader takes through orjson holds no float, so its canonical JSON skips the float check exactly."""

from __future__ import annotations

import io

import pytest

from lcm_framework.compact_json import dumps
from lcm_framework.kernel.extensions import RulePack
from lcm_framework.scrub import scrubber_from_packs
from lcm_framework.transcripts.reader import ParsedRecord, read_records

LINES = [
    (b'{"a":1,"b":[true,null,"x"],"c":{"d":"1.5e-7 in a string"}}', True),
    (b'[1,2,{"k":"v"}]', True),
    (b'{"cost":0.00001,"n":1}', False),  # a small float, spelled differently by orjson and the standard library
    (b'{"t":[1.5]}', False),
    (b'{"a": 1}', False),  # not compact: the standard decoder reads it
    (b'{"s":"\\u00e9"}', False),  # an escape orjson would not write
]


@pytest.mark.parametrize(("line", "float_free"), LINES)
def test_only_lines_read_through_orjson_are_float_free(line: bytes, float_free: bool) -> None:
    (record,) = read_records(io.BytesIO(line + b"\n"))
    assert isinstance(record, ParsedRecord) and record.float_free is float_free
    assert dumps(record.value, sort_keys=True, float_free=record.float_free) == dumps(record.value, sort_keys=True)
    scrubber = scrubber_from_packs([RulePack("none", ())])
    assert scrubber.scrub_record(record.value, float_free=record.float_free) == scrubber.scrub_record(record.value)
