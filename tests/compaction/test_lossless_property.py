"""Property: after any sequence of ingests and compactions, expanding the context down to the leaves
returns exactly the stored messages, in order, each once."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcm_framework.compaction import CompactionEngine, Mode
from lcm_framework.recall import expand, parse_ref, verify
from lcm_framework.storage.contracts import ProjectStorage

from .helpers import ingest, make_app, new_message, project_dir

ingests = st.tuples(st.just("ingest"), st.lists(st.integers(1, 400), min_size=1, max_size=25))
compactions = st.tuples(st.just("compact"), st.sampled_from(["incremental", "full"]))


def context_messages(storage: ProjectStorage, cid: int) -> list[int]:
    out: list[int] = []
    for item in storage.context.list_items(cid):
        if item.message_id is not None:
            out.append(item.message_id)
        else:
            assert item.summary_id is not None
            result = expand(storage, parse_ref(item.summary_id), depth=10_000, include_messages=True,
                            token_cap=2**40)
            assert result is not None and not result.truncated
            out.extend(int(node.id.removeprefix("msg_")) for node in result.messages())
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    operations=st.lists(st.one_of(ingests, compactions), min_size=1, max_size=8),
    fresh_tail=st.integers(0, 3),
    leaf_fanout=st.integers(2, 3),
    condensed_fanout=st.integers(2, 3),
    max_depth=st.sampled_from([0, 1, -1]),
)
def test_expanding_the_context_returns_every_message_once_in_order(
    operations: list[tuple[str, object]], fresh_tail: int, leaf_fanout: int, condensed_fanout: int, max_depth: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(project_dir(Path(tmp)), {
            "compaction.leaf_chunk_tokens": 300,
            "compaction.fresh_tail_count": fresh_tail,
            "compaction.leaf_min_fanout": leaf_fanout,
            "compaction.condensed_min_fanout": condensed_fanout,
            "compaction.incremental_max_depth": max_depth,
            "compaction.leaf_target_tokens": 60,
            "compaction.condensed_target_tokens": 60,
        })
        engine = CompactionEngine(app)
        count = 0
        with app.project() as storage:
            cid = storage.conversations.get_or_create_conversation("prop").conversation_id
            for op, arg in operations:
                if op == "ingest":
                    sizes = list(arg)  # type: ignore[call-overload]
                    batch = [new_message(count + n, f"m{count + n} " + "y" * (size * 4 - 6), size)
                             for n, size in enumerate(sizes)]
                    count += len(batch)
                    ingest(storage, "prop", batch)
                else:
                    engine.compact(storage, cid, Mode(arg))
                stored = [m.message_id for m in storage.conversations.list_messages(cid)]
                assert context_messages(storage, cid) == stored
            assert verify(storage).ok
        app.close()
