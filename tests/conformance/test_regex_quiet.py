"""A regex the RE2 library refuses (it logs the pattern, maybe a secret, on stderr by default) prints nothing on
any backend: SQLite compiles the search with RE2, PostgreSQL matches with the server's ``~`` and locates the
snippet with RE2, which refuses what the server accepts (a backreference)."""

from __future__ import annotations

import contextlib

import pytest

from lcm_framework.errors import DataValidationError
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import NewMessage, Role, SearchMode, SearchQuery


def test_a_pattern_re2_refuses_prints_nothing(project: ProjectStorage, capfd: pytest.CaptureFixture[str]) -> None:
    conversation = project.conversations.get_or_create_conversation("s")
    project.conversations.append_messages(conversation.conversation_id,
                                          [NewMessage(Role.USER, "abab token=ghp_x then more", 1)])
    if not project.capabilities.regex_search:
        pytest.skip("this backend has no regex search")
    capfd.readouterr()
    for pattern in ("(unclosed ghp_x", r"(ab)\1"):
        with contextlib.suppress(DataValidationError):
            project.lexical_search.search(SearchQuery(pattern, mode=SearchMode.REGEX))
    assert capfd.readouterr().err == ""
