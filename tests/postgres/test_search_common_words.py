"""RANKED search on PostgreSQL treats a word the planner's statistics find in most rows as a stop word for relevance.

The same rule as SQLite's (``tests/sqlite/test_search_common_words.py``): such a word scores its point on the
hits it matches but selects no candidates while selective phrases fill the page, and the rows it alone
matches come newest first, scored by the phrases matched alone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from lcm_postgres.repos import search

from lcm_framework.storage.models import NewMessage, ProjectRef, Role, SearchMode, SearchQuery

from .support import TestDatabase

QUESTION = "why did the kalo deploy fail?"


def _stored(db: TestDatabase, schema: str, make_factory: Callable[..., Any], fillers: int) -> tuple[Any, list[str]]:
    storage = make_factory().open_project(ProjectRef("c" * 64, "/common"))
    conv = storage.conversations.create_conversation("s").conversation_id
    texts = ["kalo was slow to answer", "the kalo deploy finished late"]
    texts += [f"deploy {i} {'went fine ' * (i % 7)}" for i in range(fillers)]  # lengths vary: density would differ
    start = datetime(2026, 1, 1, tzinfo=UTC)
    stored = storage.conversations.append_messages(
        conv, [NewMessage(Role.USER, t, 1, start + timedelta(seconds=n)) for n, t in enumerate(texts)])
    with db.connect() as conn:  # what autovacuum does after a bulk load
        conn.execute(f'ANALYZE "{schema}".messages')
    return storage, [str(m.message_id) for m in stored]


def test_a_frequent_word_counts_but_does_not_rank(db: TestDatabase, schema: str,
                                                  make_factory: Callable[..., Any]) -> None:
    storage, ids = _stored(db, schema, make_factory, search.COMMON_MIN + 50)
    rare, both, fillers = ids[0], ids[1], ids[2:]
    hits = storage.lexical_search.search(SearchQuery(QUESTION, SearchMode.RANKED, limit=5))
    assert [h.id for h in hits] == [both, rare, *reversed(fillers[-3:])]
    assert int(hits[0].score) == 2 and int(hits[1].score) == 1  # the frequent word still scores its point
    assert [h.score for h in hits[2:]] == [1.0, 1.0, 1.0]  # no relevance: newest first


def test_below_the_threshold_every_word_ranks(db: TestDatabase, schema: str,
                                              make_factory: Callable[..., Any]) -> None:
    storage, ids = _stored(db, schema, make_factory, search.COMMON_MIN // 2)
    hits = storage.lexical_search.search(SearchQuery(QUESTION, SearchMode.RANKED, limit=5))
    assert hits[0].id == ids[1] and int(hits[0].score) == 2
    assert all(1.0 < h.score < 1.4 for h in hits[1:])  # cover density ranks the rows of one word
