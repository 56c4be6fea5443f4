"""Regex search runs through google-re2: RE2 syntax, and linear time on hostile patterns."""

from __future__ import annotations

import time

import pytest

from lcm_framework.errors import DataValidationError
from lcm_framework.storage.models import NewMessage, Role, SearchMode, SearchQuery

from .conftest import MakeFactory, ref


def regex(storage, pattern: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.id for h in storage.lexical_search.search(SearchQuery(pattern, mode=SearchMode.REGEX))]


def test_re2_syntax_and_linear_time(make_factory: MakeFactory) -> None:
    storage = make_factory().open_project(ref())
    assert storage.capabilities.regex_search
    conv = storage.conversations.create_conversation("s")
    evil, word = storage.conversations.append_messages(
        conv.conversation_id, [NewMessage(Role.USER, "a" * 5000 + "!", 1), NewMessage(Role.USER, "Grüße aus Köln", 1)])
    assert regex(storage, r"\pL+e aus") == [str(word.message_id)]  # a Unicode class Python's re lacks
    started = time.perf_counter()
    assert regex(storage, r"(a+)+$") == []  # catastrophic for a backtracking engine
    assert regex(storage, r"(a|aa)+b") == []
    assert time.perf_counter() - started < 2.0
    assert regex(storage, r"a{3}!") == [str(evil.message_id)]


@pytest.mark.parametrize("pattern", ["(unclosed", "a{2,1}", r"(?<=x)y", "\\"])
def test_invalid_or_backtracking_only_patterns_are_refused(make_factory: MakeFactory, pattern: str) -> None:
    storage = make_factory().open_project(ref())
    with pytest.raises(DataValidationError) as info:
        regex(storage, pattern)
    assert info.value.code == "invalid_regex"
