"""Each full-text tier forced through ``storage.fts_tier``: ranked results, reported capability, rebuilds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from lcm_sqlite import fts, schema

from lcm_framework.errors import ConfigError
from lcm_framework.storage.contracts import FullTextTier
from lcm_framework.storage.models import (
    NewMemory,
    NewMessage,
    NewSummary,
    Role,
    SearchMode,
    SearchQuery,
    SearchTarget,
    SummaryKind,
)
from lcm_framework.storage.query_terms import query_chunks

from .conftest import MakeFactory, db_path, ref

TIERS = [t for t in ("fts5", "fts4", "like") if FullTextTier(t) in fts.available()]


def fill(storage) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Two of six messages mention the term (FTS4's rank_bm25 gives 0 to terms in half the rows or more)."""
    conv = storage.conversations.create_conversation("s")
    texts = {
        "strong": "kubernetes pod crashed; kubernetes restarted the kubernetes pod",
        "weak": "the kubernetes docs mention " + "unrelated words " * 40,
        **{f"none{i}": f"nothing to see here {i}" for i in range(4)},
    }
    stored = storage.conversations.append_messages(conv.conversation_id,
                                                   [NewMessage(Role.USER, t, 1) for t in texts.values()])
    storage.summaries.create_summary(NewSummary("sum_k", conv.conversation_id, SummaryKind.LEAF, 0,
                                                "kubernetes outage summary", 1, None, None, 0))
    storage.promoted_memory.create_memory(NewMemory("kubernetes runs on the lab cluster"))
    return {name: str(m.message_id) for name, m in zip(texts, stored, strict=True)}


@pytest.mark.parametrize("tier", TIERS)
def test_forced_tier_ranks_results(make_factory: MakeFactory, tier: str) -> None:
    factory = make_factory(**{"storage.fts_tier": tier})
    assert factory.capabilities.full_text_tier is FullTextTier(tier)
    assert factory.capabilities.full_text_search is (tier != "like")
    storage = factory.open_project(ref())
    ids = fill(storage)
    hits = storage.lexical_search.search(SearchQuery("kubernetes"))
    assert [h.id for h in hits] == [ids["strong"], ids["weak"]]
    assert hits[0].score > hits[1].score
    assert [h.id for h in storage.lexical_search.search(SearchQuery("Kubernetes POD"))] == [ids["strong"]]
    assert [h.id for h in storage.lexical_search.search(SearchQuery("kubernetes", target=SearchTarget.SUMMARIES))] \
        == ["sum_k"]
    assert len(storage.lexical_search.search(SearchQuery("cluster", target=SearchTarget.MEMORY))) == 1
    ranked = storage.lexical_search.search(SearchQuery("why did the kubernetes pod crash?", mode=SearchMode.RANKED))
    assert [h.id for h in ranked] == [ids["strong"], ids["weak"]]  # any word; more of them first
    assert ranked[0].score > ranked[1].score
    assert storage.lexical_search.search(SearchQuery('pod" OR "x')) == []
    assert storage.health().detail == f"full-text tier {tier}"


@pytest.mark.parametrize("tier", TIERS)
def test_index_tables_match_the_tier(make_factory: MakeFactory, tmp_path: Path, tier: str) -> None:
    make_factory(**{"storage.fts_tier": tier}).open_project(ref()).close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        sql = {r[0]: r[1] for r in raw.execute("SELECT name, sql FROM sqlite_master WHERE name = 'messages_fts'")}
        recorded = raw.execute("SELECT value FROM meta WHERE key = 'fts_tier'").fetchone()[0]
    finally:
        raw.close()
    assert recorded == tier
    if tier == "like":
        assert sql == {}
    else:
        assert f"USING {tier}" in sql["messages_fts"]


def test_switching_tier_rebuilds_the_index(make_factory: MakeFactory) -> None:
    if not {FullTextTier.FTS5, FullTextTier.FTS4} <= fts.available():
        pytest.skip("needs both FTS5 and FTS4")
    first = make_factory(**{"storage.fts_tier": "fts5"}).open_project(ref())
    ids = fill(first)
    first.close()
    for tier in ("fts4", "like", "fts5"):
        storage = make_factory(**{"storage.fts_tier": tier}).open_project(ref())
        assert [h.id for h in storage.lexical_search.search(SearchQuery("kubernetes pod"))] == [ids["strong"]]
        conv = storage.conversations.get_or_create_conversation("s")
        (m,) = storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, f"new {tier}", 1)])
        assert [h.id for h in storage.lexical_search.search(SearchQuery(f"new {tier}"))] == [str(m.message_id)]
        storage.close()


def test_unknown_tier_is_refused(make_factory: MakeFactory) -> None:
    with pytest.raises(ConfigError):
        make_factory(**{"storage.fts_tier": "fts9"})


def test_auto_picks_the_best_available() -> None:
    assert fts.resolve("auto") is next(t for t in fts.TIERS if t in fts.available())


def test_match_expression_quotes_user_text() -> None:
    assert fts.match_expression(query_chunks('foo-bar "x NEAR(')) == '"foo bar" "x" "NEAR"'
    assert fts.any_of(query_chunks('foo-bar OR the "x NEAR')) == '"foo bar" OR "x" OR "NEAR"'
    assert query_chunks('" - * ( ) the') == []


@pytest.mark.parametrize("tier", [t for t in TIERS if t != "like"])
def test_unfiltered_ranking_is_bounded_to_the_newest_candidates(make_factory: MakeFactory,
                                                                 monkeypatch: pytest.MonkeyPatch, tier: str) -> None:
    from lcm_sqlite import search

    monkeypatch.setattr(search, "RANK_CANDIDATES", 3)
    storage = make_factory(**{"storage.fts_tier": tier}).open_project(ref())
    conv = storage.conversations.create_conversation("s")
    texts = ["zebra zebra zebra zebra"] + [f"zebra once {i}" for i in range(4)] + [f"filler {i}" for i in range(12)]
    stored = storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, t, 1) for t in texts])
    ids = [str(m.message_id) for m in stored]
    unfiltered = [h.id for h in storage.lexical_search.search(SearchQuery("zebra"))]
    assert sorted(unfiltered) == sorted(ids[2:5])
    filtered = [h.id for h in storage.lexical_search.search(SearchQuery("zebra", conversation_id=conv.conversation_id))]
    assert filtered[0] == ids[0] and sorted(filtered) == sorted(ids[:5])


@pytest.mark.parametrize("tier", [t for t in TIERS if t != "like"])
def test_a_batch_of_messages_is_indexed_as_few_segments(make_factory: MakeFactory, tmp_path: Path,
                                                        tier: str) -> None:
    """Appending messages in a transaction flushes the full-text index once per INSERT statement, not once per
    row: 400 messages leave a few new segments at most, not hundreds."""
    storage = make_factory(**{"storage.fts_tier": tier}).open_project(ref())
    conv = storage.conversations.create_conversation("s")
    raw = sqlite3.connect(db_path(tmp_path, ref()), isolation_level=None)
    segments = ("SELECT count(DISTINCT segid) FROM messages_fts_idx" if tier == "fts5"
                else "SELECT count(*) FROM messages_fts_segdir")
    try:
        if tier == "fts5":
            raw.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)")
        before = raw.execute(segments).fetchone()[0]
        texts = [f"batch message {i} word{i}" for i in range(400)]
        storage.transaction(lambda repos: repos.conversations.append_messages(
            conv.conversation_id, [NewMessage(Role.USER, t, 1) for t in texts]))
        assert raw.execute(segments).fetchone()[0] - before <= 3
    finally:
        raw.close()
    assert len(storage.lexical_search.search(SearchQuery("word0"))) == 1
    assert len(storage.lexical_search.search(SearchQuery("word399"))) == 1
    assert len(storage.lexical_search.search(SearchQuery("batch message", limit=500))) == 400
    storage.close()


def test_a_version_1_database_is_reindexed_with_stemming(make_factory: MakeFactory, tmp_path: Path) -> None:
    path = db_path(tmp_path, ref())
    path.parent.mkdir(parents=True)
    raw = sqlite3.connect(path, isolation_level=None)  # the schema before stemming, and its unstemmed index
    for step in schema.MIGRATIONS[:schema.MIGRATIONS.index(schema.FTS_STEMMING)]:
        if callable(step):
            step(raw)
        else:
            for statement in schema.statements(step):
                raw.execute(statement)
    raw.execute(f"PRAGMA user_version = {schema.MIGRATIONS.index(schema.FTS_STEMMING)}")
    raw.execute("INSERT INTO meta (key, value) VALUES ('project_id', ?), ('root', ?), ('fts_tier', 'fts5')",
                (ref().project_id, ref().root))
    raw.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', "
                "content_rowid='message_id', tokenize='unicode61')")
    raw.execute("INSERT INTO conversations (session_id, created_at) VALUES ('s', 0)")
    raw.execute("INSERT INTO messages (conversation_id, seq, role, token_count, created_at, content) "
                "VALUES (1, 0, 'user', 1, 0, 'the webhooks were routed')")
    raw.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    raw.close()
    storage = make_factory(**{"storage.fts_tier": "fts5"}).open_project(ref())
    stored = storage.conversations.list_messages(1)[0]
    try:
        assert [h.id for h in storage.lexical_search.search(SearchQuery("route webhook"))] == [str(stored.message_id)]
    finally:
        storage.close()


@pytest.mark.parametrize("tier", [t for t in TIERS if t != "like"])
def test_new_messages_are_indexed_from_the_text_in_hand_not_read_back(make_factory: MakeFactory, tmp_path: Path,
                                                                      tier: str) -> None:
    """A long (compressed, shared) message text is indexed as the adapter got it: its codec decodes nothing while
    the message is stored, and the index holds it exactly once, searchable at once."""
    storage = make_factory(**{"storage.fts_tier": tier}).open_project(ref())
    conv = storage.conversations.create_conversation("s")
    db = storage_driver_db(storage)
    decoded: list[object] = []
    real = db.codec.decode
    db.codec.decode = lambda *args: decoded.append(args) or real(*args)  # type: ignore[method-assign]
    long_text = "the flaky zookeeper election timed out again " * 20
    [message] = storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, long_text, 1)])
    assert decoded == []
    assert [h.id for h in storage.lexical_search.search(SearchQuery("zookeeper election"))] == [str(message.message_id)]
    storage.close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        assert raw.execute("SELECT text_id IS NOT NULL FROM messages").fetchone() == (1,)
        assert raw.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zookeeper'").fetchone() == (1,)
    finally:
        raw.close()


def test_a_database_whose_messages_index_had_an_insert_trigger_loses_only_the_trigger(make_factory: MakeFactory,
                                                                                      tmp_path: Path) -> None:
    """Written before the adapter fed the index: the trigger goes (else each new message would be indexed
    twice), the index and what it holds stay (no rebuild)."""
    storage = make_factory().open_project(ref())
    ids = fill(storage)
    storage.close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    raw.execute("CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN INSERT INTO messages_fts(rowid, "
                "content) SELECT message_id, content FROM message_texts WHERE message_id = new.message_id; END")
    raw.execute("DELETE FROM meta WHERE key = 'fts_feed'")
    raw.commit()
    raw.close()
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("t")
    [later] = storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "kubernetes", 1)])
    hits = [h.id for h in storage.lexical_search.search(SearchQuery("kubernetes"))]
    assert sorted(hits) == sorted([ids["strong"], ids["weak"], str(later.message_id)])
    storage.close()
    raw = sqlite3.connect(db_path(tmp_path, ref()))
    try:
        triggers = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert "messages_fts_ai" not in triggers and {"messages_fts_bd", "summaries_fts_ai"} <= triggers
        assert raw.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'kubernetes'").fetchone() == (3,)
    finally:
        raw.close()


def storage_driver_db(storage):  # type: ignore[no-untyped-def]
    """The ``Database`` under a (checked) SQLite project storage."""
    from lcm_framework.storage.checked import storage_driver

    return storage_driver(storage)._scope.db
