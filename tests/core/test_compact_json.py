"""compact_json spells every value exactly as the standard library does, whichever encoder ran."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lcm_framework import compact_json

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _TEXT
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_TEXT, children, max_size=5),
    max_leaves=30,
)


def _stdlib(value: Any, sort_keys: bool) -> bytes:
    return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False).encode()


@settings(max_examples=400, deadline=None)
@given(_VALUES, st.booleans())
def test_matches_the_standard_library(value: Any, sort_keys: bool) -> None:
    assert compact_json.dumps(value, sort_keys=sort_keys) == _stdlib(value, sort_keys)


@pytest.mark.parametrize("number", [1e-05, 1e-07, 2.5e-10, 0.0001, 1e16, 1.5e300, -0.0, 5e-324, 0.1])
def test_floats_whose_spelling_differs_between_encoders(number: float) -> None:
    value = {"b": [number], "a": "x"}
    assert compact_json.dumps(value, sort_keys=True) == _stdlib(value, True)


def test_what_is_not_json_is_refused() -> None:
    with pytest.raises(UnicodeEncodeError):
        compact_json.dumps({"k": "\ud800"})
    with pytest.raises(TypeError):
        compact_json.dumps({"k": object()})


_LONG = "x" * 4000  # enough output for the float-free walk to run before any search


@pytest.mark.parametrize("value", [
    {"text": _LONG, "n": 1e-05},
    {"text": _LONG, "deep": [{"a": [1, "b", {"c": 2.5e-10}]}]},
    [_LONG, [[[1e-07]]]],
    {"text": _LONG, "t": (1, 1e-05)},  # a tuple is no reader value: searched, not walked
    {"text": _LONG, "kept": [1, True, None, "s", {"k": [0]}]},
])
def test_long_values_with_and_without_small_floats(value: Any) -> None:
    assert compact_json.dumps(value) == _stdlib(value, False)
    assert compact_json.dumps(value, sort_keys=True) == _stdlib(value, True)
