"""Lexical search: full text, substring and regex over messages, summaries and memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lcm_framework.errors import DataValidationError, UnsupportedCapabilityError
from lcm_framework.storage.contracts import ProjectStorage
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


def add(project: ProjectStorage, session: str, *contents: str, when: datetime | None = None) -> list[str]:
    conv = project.conversations.get_or_create_conversation(session)
    stored = project.conversations.append_messages(
        conv.conversation_id, [NewMessage(Role.USER, c, 1, created_at=when) for c in contents])
    return [str(m.message_id) for m in stored]


def ids(project: ProjectStorage, text: str, **kw: object) -> list[str]:
    return [hit.id for hit in project.lexical_search.search(SearchQuery(text, **kw))]  # type: ignore[arg-type]


def test_full_text_finds_all_words_case_insensitively(project: ProjectStorage) -> None:
    a, b, _ = add(project, "s", "The Deploy failed with a timeout", "deploy succeeded", "nothing relevant")
    assert sorted(ids(project, "deploy")) == sorted([a, b])
    assert ids(project, "DEPLOY timeout") == [a]
    assert ids(project, "absentword") == []
    hit = project.lexical_search.search(SearchQuery("timeout"))[0]
    assert hit.target is SearchTarget.MESSAGES and hit.conversation_id is not None
    assert "timeout" in hit.snippet and hit.created_at.tzinfo is not None


def test_more_matches_rank_higher(project: ProjectStorage) -> None:
    weak, strong = add(project, "s", "cache " + "filler words here " * 30,
                       "cache cache cache miss in the cache layer")
    found = project.lexical_search.search(SearchQuery("cache"))
    assert [h.id for h in found] == [strong, weak]
    assert found[0].score > found[1].score


def test_user_syntax_never_breaks_the_query(project: ProjectStorage) -> None:
    (a,) = add(project, "s", 'error in foo-bar "x" module: AND OR NOT NEAR ( ) * ^ :')
    for text in ('foo-bar "x', '"', "(", "AND", "NOT", "*", "a:b", "foo AND", "x)", "'", "NEAR(", "-", "^x"):
        project.lexical_search.search(SearchQuery(text))
        project.lexical_search.search(SearchQuery(text, mode=SearchMode.SUBSTRING))
    assert ids(project, 'foo-bar "x') == [a]
    assert ids(project, "") == []
    assert ids(project, "   ") == []


def test_limits_and_filters(project: ProjectStorage) -> None:
    old = datetime(2020, 1, 1, tzinfo=UTC)
    new = datetime(2024, 1, 1, tzinfo=UTC)
    (o,) = add(project, "one", "shared term", when=old)
    (n,) = add(project, "two", "shared term", when=new)
    assert ids(project, "shared") == [n, o]
    assert ids(project, "shared", limit=1) == [n]
    assert ids(project, "shared", limit=0) == []
    assert ids(project, "shared", limit=-1) == [n, o]
    assert ids(project, "shared", limit=None) == [n, o]
    assert ids(project, "shared", since=datetime(2022, 1, 1, tzinfo=UTC)) == [n]
    conv_one = project.conversations.find_conversations("one")[0].conversation_id
    assert ids(project, "shared", conversation_id=conv_one) == [o]


def test_ties_are_ordered_newest_then_id(project: ProjectStorage) -> None:
    when = datetime(2023, 5, 5, tzinfo=UTC)
    first = add(project, "s", "same words", "same words", when=when)
    (newest,) = add(project, "s", "same words", when=datetime(2023, 6, 6, tzinfo=UTC))
    expected = [newest, *sorted(first, key=int)]
    assert ids(project, "same words") == expected
    assert ids(project, "same", mode=SearchMode.SUBSTRING) == expected


def test_substring_mode_is_exact(project: ProjectStorage) -> None:
    a, b = add(project, "s", "path /usr/lib/x86_64-linux", "100% done_ok")
    assert ids(project, "/usr/lib/x86", mode=SearchMode.SUBSTRING) == [a]
    assert ids(project, "100%", mode=SearchMode.SUBSTRING) == [b]
    assert ids(project, "_ok", mode=SearchMode.SUBSTRING) == [b]
    assert ids(project, "%", mode=SearchMode.SUBSTRING) == [b]
    assert ids(project, "x86_64-linuxx", mode=SearchMode.SUBSTRING) == []
    assert ids(project, "PATH /usr", mode=SearchMode.SUBSTRING) == []  # case-sensitive on every backend


def test_regex_mode(project: ProjectStorage) -> None:
    a, _ = add(project, "s", "error code E1234 raised", "error code none")
    if not project.capabilities.regex_search:
        with pytest.raises(UnsupportedCapabilityError):
            project.lexical_search.search(SearchQuery("E[0-9]+", mode=SearchMode.REGEX))
        return
    assert ids(project, r"E\d{4}", mode=SearchMode.REGEX) == [a]
    assert ids(project, r"^nothing$", mode=SearchMode.REGEX) == []
    with pytest.raises(DataValidationError):
        project.lexical_search.search(SearchQuery("(unclosed", mode=SearchMode.REGEX))


def test_snippets_are_short_and_centered(project: ProjectStorage) -> None:
    text = "lorem ipsum " * 200 + "needle found here " + "dolor sit " * 200
    add(project, "s", text)
    for mode in (SearchMode.FULL_TEXT, SearchMode.SUBSTRING):
        (hit,) = project.lexical_search.search(SearchQuery("needle", mode=mode))
        assert "needle" in hit.snippet and len(hit.snippet) <= 260


def test_summary_and_memory_targets(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    project.summaries.create_summary(NewSummary("sum_search", conv.conversation_id, SummaryKind.LEAF, 0,
                                                "we migrated the database schema", 5, None, None, 0))
    kept = project.promoted_memory.create_memory(NewMemory("database backups run nightly"))
    gone = project.promoted_memory.create_memory(NewMemory("database password rotation"))
    project.promoted_memory.archive(gone.memory_id)
    (hit,) = project.lexical_search.search(SearchQuery("database", target=SearchTarget.SUMMARIES))
    assert (hit.id, hit.conversation_id, hit.target) == ("sum_search", conv.conversation_id, SearchTarget.SUMMARIES)
    (mem,) = project.lexical_search.search(SearchQuery("database", target=SearchTarget.MEMORY))
    assert (mem.id, mem.conversation_id, mem.target) == (str(kept.memory_id), None, SearchTarget.MEMORY)
    assert ids(project, "database") == []


def test_deleted_messages_leave_the_index(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("s")
    (m,) = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "ephemeral", 1)])
    assert ids(project, "ephemeral") == [str(m.message_id)]
    project.conversations.delete_messages([m.message_id])
    assert ids(project, "ephemeral") == []


def test_search_is_project_isolated(project: ProjectStorage, other_project: ProjectStorage) -> None:
    add(project, "s", "confidential roadmap")
    assert other_project.lexical_search.search(SearchQuery("roadmap")) == []
    assert other_project.lexical_search.search(SearchQuery("roadmap", mode=SearchMode.SUBSTRING)) == []


def test_full_text_stems_and_ignores_stop_words(project: ProjectStorage) -> None:
    routed, settled = add(project, "s", "We routed the webhooks through the proxy",
                          "The billing dispute was settled on Friday")
    assert ids(project, "route webhook") == [routed]
    assert ids(project, "settles") == [settled]
    assert ids(project, "the webhooks") == [routed]  # "the" is a stop word, not a required word
    assert ids(project, "the of and") == []  # nothing left to look for


def test_ranked_answers_questions_with_any_word_best_first(project: ProjectStorage) -> None:
    one, all_terms, phrase = add(
        project, "s",
        "the port was changed yesterday",
        "the port of the invoice job is 7311; its worker retries",
        "since Monday the invoice worker port is 7311",
    )
    unrelated, = add(project, "s", "nothing to see here")
    found = project.lexical_search.search(
        SearchQuery("What is the invoice worker's port?", mode=SearchMode.RANKED))
    assert [h.id for h in found] == [phrase, all_terms, one]  # whole phrase, then every word, then one word
    assert found[0].score > found[1].score > found[2].score
    assert unrelated not in [h.id for h in found]
    assert ids(project, "which invoice worker port changed", mode=SearchMode.FULL_TEXT) == []
    assert ids(project, "what is the", mode=SearchMode.RANKED) == []


def test_identifiers_still_match_exactly(project: ProjectStorage) -> None:
    deploy, test_line, _ = add(project, "s", "rolled back deploy-7f3a2 after the alert",
                               "failure at test_auth.py:103 in the login flow", "deploy 7f3a3 and test_auth.py:104")
    for mode in (SearchMode.FULL_TEXT, SearchMode.RANKED):
        assert ids(project, "deploy-7f3a2", mode=mode) == [deploy]
        assert ids(project, "test_auth.py:103", mode=mode) == [test_line]


def test_recall_search_gives_the_same_fused_list_on_every_backend(project: ProjectStorage) -> None:
    from lcm_framework.recall import search

    conv = project.conversations.get_or_create_conversation("chat")
    turns = ["How is your sister's new puppy doing? Did they pick a name?", "Pickles! It chews everything.",
             "We moved the billing webhooks to the eu-west proxy.", "Lunch at noon.", "My sister visits next week."]
    stored = project.conversations.append_messages(conv.conversation_id, [
        NewMessage(Role.USER if n % 2 == 0 else Role.ASSISTANT, text, 1,
                   created_at=datetime(2024, 3, 1, 9, n, tzinfo=UTC)) for n, text in enumerate(turns)])
    memory = project.promoted_memory.create_memory(NewMemory("the sister owns the puppy"))
    ranked = search(project, "what is the name of my sister's puppy", limit=10)
    ids = [f"msg_{m.message_id}" for m in stored]
    assert [(r.hit.id, r.role, [t.id for t in r.context]) for r in ranked] == [
        (ids[0], "user", [ids[1]]), (f"mem_{memory.memory_id}", None, []), (ids[4], "user", [ids[3]])]
    assert ranked[1].hit.score > 0.5 > ranked[2].hit.score
    assert ranked[0].context[0].text == "Pickles! It chews everything." and ranked[0].hit.session_id == "chat"
