"""Runtime guarantees beyond the conformance suite: timeouts, discarded connections, bigint checks,
long tokens, sanitized errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lcm_framework.errors import DataValidationError, StorageError, StorageUnavailableError
from lcm_framework.storage.models import NewMessage, ProjectRef, Role, SearchMode, SearchQuery

from .support import TestDatabase

pytestmark = pytest.mark.postgres

REF = ProjectRef("r" * 64, "/runtime")


def test_statement_timeout_is_a_sanitized_unavailable_error(make_factory: Callable[..., Any]) -> None:
    make_factory().close()  # migrate under the default timeout; a loaded machine may need more than 1 s
    factory = make_factory(statement_timeout_ms=1000)
    with pytest.raises(StorageUnavailableError) as info, factory.runtime.connection("test") as conn:
        conn.execute("SELECT pg_sleep(5) /* secret-sql-text */")
    assert info.value.code == "sqlstate_57014" and "secret-sql-text" not in str(info.value)
    assert factory.health().ok  # the pool recovered


def test_an_interrupted_connection_is_discarded_not_reused(make_factory: Callable[..., Any]) -> None:
    factory = make_factory()
    with pytest.raises(KeyboardInterrupt), factory.runtime.connection("test") as conn:
        pid = conn.info.backend_pid
        raise KeyboardInterrupt
    assert conn.closed
    with factory.runtime.connection("test") as fresh:
        assert fresh.info.backend_pid != pid


def test_session_settings_are_pinned(make_factory: Callable[..., Any], schema: str) -> None:
    factory = make_factory(statement_timeout_ms=4321, idle_in_transaction_timeout_ms=9876)
    with factory.runtime.connection("test") as conn:
        row = conn.execute("SELECT current_setting('statement_timeout'), "
                           "current_setting('idle_in_transaction_session_timeout'), current_setting('TimeZone'), "
                           "current_setting('application_name'), current_setting('search_path')").fetchone()
    assert row == ("4321ms", "9876ms", "UTC", "lcm", f"{schema},public")


def test_out_of_range_bigints_are_refused_not_rounded(db: TestDatabase, schema: str,
                                                     make_factory: Callable[..., Any]) -> None:
    project = make_factory().open_project(REF)
    conv = project.conversations.create_conversation("s")
    (m,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "big", 1)])
    with db.connect() as conn:
        conn.execute(f'UPDATE "{schema}".messages SET token_count = %s WHERE message_id = %s',
                     (2**53 + 1, m.message_id))
    with pytest.raises(StorageError) as info:
        project.conversations.list_messages(conv.conversation_id)
    assert info.value.code == "integer_out_of_range"


def test_tokens_beyond_the_lexeme_limit_are_stored_whole_and_found(make_factory: Callable[..., Any]) -> None:
    project = make_factory().open_project(REF)
    conv = project.conversations.create_conversation("s")
    long_token = "é" * 1500 + "z" * 600  # 3,600 UTF-8 bytes: too long for a tsvector lexeme
    (m, _) = project.conversations.append_messages(conv.conversation_id, [
        NewMessage(Role.TOOL, f"blob {long_token} end", 1), NewMessage(Role.USER, "short words only", 1)])
    (stored,) = project.conversations.get_messages([m.message_id])
    assert stored.content == f"blob {long_token} end"
    for mode in (SearchMode.FULL_TEXT, SearchMode.SUBSTRING):
        hits = project.lexical_search.search(SearchQuery(long_token, mode=mode))
        assert [h.id for h in hits] == [str(m.message_id)]
    assert [h.id for h in project.lexical_search.search(SearchQuery(f"blob {long_token}"))] == [str(m.message_id)]
    assert project.lexical_search.search(SearchQuery(long_token + "x")) == []


def test_driver_errors_carry_no_sql_or_values(make_factory: Callable[..., Any]) -> None:
    project = make_factory().open_project(REF)
    project.conversations.create_conversation("s")
    with pytest.raises(DataValidationError) as info:
        project.lexical_search.search(SearchQuery("(unclosed-secret", mode=SearchMode.REGEX))
    text = str(info.value)
    assert "unclosed-secret" not in text and "SELECT" not in text and "sqlstate_2201B" in text
