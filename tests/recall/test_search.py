"""``search``: natural-language questions over messages, summaries and memory, fused by rank."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from lcm_framework.recall import search
from lcm_framework.storage.models import NewMemory, NewSummary, SummaryKind

from ..compaction.helpers import ingest, make_app, new_message, project_dir


def test_a_question_finds_old_messages_summaries_and_memory_interleaved_by_rank(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        cid, stored = ingest(storage, "s1", [
            new_message(0, "We routed the billing webhooks through the eu-west proxy on port 7311."),
            new_message(1, "The proxy config lives in config/proxy.yaml."),
            new_message(2, "Lunch at noon."),
        ])
        storage.summaries.create_summary(NewSummary("sum_0123456789abcdef", cid, SummaryKind.LEAF, 0,
                                                    "billing webhooks are routed via the proxy", 8, None, None, 0,
                                                    source_message_ids=[stored[0].message_id]))
        storage.promoted_memory.create_memory(NewMemory("webhook routing goes through eu-west"))
        ranked = search(storage, "How do we route the billing webhook?", limit=10)
    by_id = {r.hit.id: r for r in ranked}
    top = by_id[f"msg_{stored[0].message_id}"]  # stemmed: route/routed, webhook/webhooks
    assert top.covered_by == ("sum_0123456789abcdef",)
    # the best of each list first (rank fusion), whatever their raw scores
    assert {r.hit.kind for r in ranked[:3]} == {"message", "summary", "memory"} and top.rank <= 3
    assert f"msg_{stored[2].message_id}" not in [r.hit.id for r in ranked]
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    assert all(a.hit.score >= b.hit.score for a, b in pairwise(ranked))
