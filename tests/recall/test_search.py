"""``search``: questions over messages, summaries and memory, fused by relevance, merged, with neighbours."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise
from pathlib import Path

from lcm_framework.recall import search
from lcm_framework.recall.passages import passage, query_stems
from lcm_framework.recall.search import RESULT_CHARS, Ranked, within_cap
from lcm_framework.storage.contracts import ProjectStorage
from lcm_framework.storage.models import NewMemory, NewSummary, SummaryKind

from ..compaction.helpers import T0, ingest, make_app, new_message, project_dir


def _summary(storage: ProjectStorage, cid: int, content: str, message_ids: list[int]) -> str:
    summary_id = "sum_0123456789abcdef"
    storage.summaries.create_summary(NewSummary(summary_id, cid, SummaryKind.LEAF, 0, content, 8, T0,
                                                T0 + timedelta(minutes=1), 0, source_message_ids=message_ids))
    return summary_id


def test_a_summary_matching_less_than_a_message_takes_no_slot_it_is_named_by_it(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", [
            new_message(0, "We routed the billing webhooks through the eu-west proxy on port 7311."),
            new_message(1, "The proxy config lives in config/proxy.yaml."),
            new_message(2, "Lunch at noon."),
        ])
        summary_id = _summary(storage, cid, "webhooks go through the proxy", [stored[0].message_id])
        ranked = search(storage, "How do we route the billing webhook?", limit=10, context=0)
    # the old reciprocal-rank fusion gave the summary one of the top three slots whatever it matched
    assert [r.hit.kind for r in ranked] == ["message"]
    assert ranked[0].hit.id == f"msg_{stored[0].message_id}" and ranked[0].covered_by == (summary_id,)


def test_a_summary_matching_words_spread_over_its_turns_ranks_above_them(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", [new_message(0, "The invoice worker crashed at midnight."),
                                             new_message(1, "It was the disk quota on the batch host.")])
        summary_id = _summary(storage, cid, "invoice worker crash: disk quota on the batch host",
                              [m.message_id for m in stored])
        ranked = search(storage, "invoice worker disk quota", limit=10, context=0)
    assert ranked[0].hit.id == summary_id and ranked[0].span == (T0, T0 + timedelta(minutes=1))
    # the summary is the group header of its turns that match: they are shown under it, not repeated
    assert [(t.id, t.role) for t in ranked[0].hits] == [(f"msg_{stored[0].message_id}", "user"),
                                                        (f"msg_{stored[1].message_id}", "assistant")]
    assert len(ranked) == 1


def test_relevance_orders_all_kinds_on_one_scale(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "s1", [new_message(0, "the staging database password rotates monthly"),
                                           new_message(1, "nothing about it here at all, only a database")])
        strong = storage.promoted_memory.create_memory(NewMemory("rotate the staging database password monthly"))
        weak = storage.promoted_memory.create_memory(NewMemory("the database is postgres"))
        ranked = search(storage, "staging database password", limit=10, context=0)
    ids = [f"msg_{m.message_id}" for m in stored]
    # the old fusion alternated the lists by rank: the weak memory came second, before the strong one
    assert {r.hit.id for r in ranked[:2]} == {ids[0], f"mem_{strong.memory_id}"}
    assert {r.hit.id for r in ranked[2:]} == {ids[1], f"mem_{weak.memory_id}"}
    assert all(0 < r.hit.score <= 1 for r in ranked) and ranked[0].hit.score > 0.8 > 0.5 > ranked[2].hit.score
    assert all(a.hit.score >= b.hit.score for a, b in pairwise(ranked))


def test_a_hit_carries_its_neighbouring_turns_and_is_not_repeated(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "s1", [
            new_message(0, "Unrelated chatter first."),
            new_message(1, "How is your sister's new puppy doing? Did they pick a name?"),
            new_message(2, "Pickles! It chews everything."),
            new_message(3, "The puppy also loves the park."),
            new_message(4, "The puppy also loves the park."),
        ])
        ranked = search(storage, "what is the name of the sister's puppy", limit=10)
        bare = search(storage, "what is the name of the sister's puppy", limit=10, context=0)
    ids = [f"msg_{m.message_id}" for m in stored]
    assert ranked[0].hit.id == ids[1] and ranked[0].role == "assistant"
    assert [(t.id, t.role) for t in ranked[0].context] == [(ids[0], "user"), (ids[2], "user")]
    assert ranked[0].context[1].text == "Pickles! It chews everything."  # the answer, in the question's result
    shown = [r.hit.id for r in ranked] + [t.id for r in ranked for t in r.context]
    assert len(shown) == len(set(shown))  # a turn shown once
    assert [r.hit.id for r in ranked] == [ids[1], ids[4]]  # the newest of two equal turns, once
    assert [r.hit.id for r in bare] == [ids[1], ids[4]] and all(not r.context for r in bare)


def test_a_long_message_shows_its_matching_sentence_with_its_date(tmp_path: Path) -> None:
    filler = "Some other remark about the weather and the trains. " * 12
    text = f"{filler}The deploy key moved to vault path ops/deploy. {filler}"
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "s1", [new_message(0, text)])
        (result,) = search(storage, "where did the deploy key move?", limit=5)
    assert "The deploy key moved to vault path ops/deploy." in result.hit.snippet
    assert len(result.hit.snippet) <= RESULT_CHARS + 2 and result.hit.created_at == stored[0].created_at


def test_passage_prefers_the_best_matching_sentence_and_marks_cuts() -> None:
    text = "First line about nothing. Second one mentions the cache layer. Third is noise again."
    stems = query_stems("which cache layer")
    assert passage(text, stems, 40) == "…Second one mentions the cache layer.…"
    assert passage(text, stems, 500) == text
    assert passage("x" * 300 + " cache " + "y" * 300, stems, 50).count("cache") == 1


def test_the_list_stops_before_its_character_cap(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        ingest(storage, "s1", [new_message(n, f"cache entry {n} " + "word " * 40) for n in range(6)])
        ranked = search(storage, "cache", limit=6, context=0)
    assert len(ranked) == 6
    kept = within_cap(ranked, cap=ranked[0].chars * 3)
    assert [r.rank for r in kept] == [1, 2, 3]
    assert within_cap(ranked[:1], cap=1) == ranked[:1]  # the first result always
    assert isinstance(kept[0], Ranked)


def test_a_hit_whose_best_sentence_is_already_listed_is_left_out(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "s1", [
            new_message(0, "Todos have been modified successfully. Deploy the worker next."),
            new_message(2, "Lunch first."),
            new_message(4, "Todos have been modified successfully. Then the tests."),
            new_message(6, "The worker deploy failed on the todos step."),
        ])
        ranked = search(storage, "todos modified", limit=10, context=0)
    assert [r.hit.id for r in ranked] == [f"msg_{stored[2].message_id}", f"msg_{stored[3].message_id}"]


def test_a_hit_with_the_text_of_a_turn_shown_as_a_neighbour_is_left_out(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "s1", [
            new_message(0, "Yes, the puppy is named Pickles."),  # the same words, said earlier
            new_message(1, "Unrelated chatter about the weather and the train."),
            new_message(2, "Did your sister name the new puppy Pickles?"),
            new_message(3, "Yes, the puppy is named Pickles."),
        ])
        ranked = search(storage, "sister puppy name Pickles", limit=10, context=1)
    ids = [f"msg_{m.message_id}" for m in stored]
    assert ranked[0].hit.id == ids[2] and ids[3] in [t.id for t in ranked[0].context]
    assert [r.hit.id for r in ranked] == [ids[2]]  # msg 3 shown as its neighbour; msg 0 says the same


def test_best_sentence_of_a_text_without_one_is_empty_text() -> None:
    from lcm_framework.recall.passages import best_sentence

    assert best_sentence("   \n\t ", query_stems("puppy")) == ""
    assert best_sentence("no full stop here", query_stems("stop")) == "no full stop here"
