"""RANKED search on the FTS tiers treats a corpus-frequent phrase as a stop word for relevance.

A phrase in more than ``COMMON_MIN`` rows and more than one in ``COMMON_SHARE`` of them still scores its
point on the hits it matches, but selects no candidates of its own while selective phrases fill the page,
and the rows it alone matches come newest first with no relevance fraction.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from lcm_sqlite import fts, search

from lcm_framework.storage.contracts import FullTextTier
from lcm_framework.storage.models import NewMessage, Role, SearchMode, SearchQuery

from .conftest import MakeFactory, ref

TIERS = [t for t in ("fts5", "fts4") if FullTextTier(t) in fts.available()]
QUESTION = "why did the kalo deploy fail?"


def _stored(make_factory: MakeFactory, tier: str, fillers: int):  # type: ignore[no-untyped-def]
    storage = make_factory(**{"storage.fts_tier": tier}).open_project(ref())
    conv = storage.conversations.create_conversation("s").conversation_id
    texts = ["kalo was slow to answer", "the kalo deploy finished late"]
    # lengths vary, so bm25 would not order the fillers newest first
    texts += [f"deploy {i} {'went fine ' * (i % 7)}" for i in range(fillers)]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    stored = storage.conversations.append_messages(
        conv, [NewMessage(Role.USER, t, 1, start + timedelta(seconds=n)) for n, t in enumerate(texts)])
    return storage, conv, [str(m.message_id) for m in stored]


@pytest.mark.parametrize("tier", TIERS)
def test_a_frequent_phrase_counts_but_does_not_rank(make_factory: MakeFactory, tier: str) -> None:
    storage, conv, ids = _stored(make_factory, tier, search.COMMON_MIN + 50)
    rare, both, fillers = ids[0], ids[1], ids[2:]
    for conversation in (None, conv):  # unfiltered (candidate window) and filtered
        hits = storage.lexical_search.search(SearchQuery(QUESTION, SearchMode.RANKED, limit=5,
                                                         conversation_id=conversation))
        assert [h.id for h in hits] == [both, rare, *reversed(fillers[-3:])]
        assert int(hits[0].score) == 2 and int(hits[1].score) == 1  # the frequent phrase still scores its point
        assert [h.score for h in hits[2:]] == [1.0, 1.0, 1.0]  # no relevance: newest first
    storage.close()


@pytest.mark.parametrize("tier", TIERS)
def test_below_the_threshold_every_phrase_ranks(make_factory: MakeFactory, tier: str) -> None:
    storage, _conv, ids = _stored(make_factory, tier, search.COMMON_MIN // 2)
    hits = storage.lexical_search.search(SearchQuery(QUESTION, SearchMode.RANKED, limit=5))
    assert [h.id for h in hits[:2]] == [ids[1], ids[0]]
    if tier == "fts5":  # FTS4's rank_bm25 clamps the weight of a term in half the rows or more to 0
        assert all(1.0 < h.score < 1.4 for h in hits[2:])
        shortest = [ids[2 + i] for i in range(search.COMMON_MIN // 2) if i % 7 == 0]
        assert [h.id for h in hits[2:]] == shortest[::-1][:3]  # bm25 prefers them to the newest fillers
    storage.close()
