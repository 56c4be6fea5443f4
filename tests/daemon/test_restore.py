"""What SessionStart restores: a new session gets the project's previous session even when it was never
compacted (its summaries, then its last raw turns, newest first within the budget); a compacted session gets its
own summaries."""

from __future__ import annotations

from pathlib import Path

from lcm_framework.assembly.restore import REFERENCE_TOKENS, restore
from lcm_framework.compaction import CompactionEngine, Mode
from lcm_framework.transcripts.format_helpers import LCM_CONTEXT_HEADER
from tests.compaction.helpers import ingest, make_app, new_message, project_dir, texts


def test_a_new_session_gets_the_previous_uncompacted_session_within_budget(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "previous", texts(12, words=20))
        result = restore(storage, "brand-new", max_tokens=200, limit=12)
        assert result["from_session"] == "previous" and result["summaries"] == []
        chosen = result["messages"]
        assert chosen and chosen == [m.message_id for m in stored[-len(chosen):]]  # the last turns, in order
        assert result["tokens"] <= 200 and result["tokens"] + stored[-len(chosen) - 1].token_count > 200
        text = result["context"]
        assert text.startswith(LCM_CONTEXT_HEADER) and "previous session previous" in text
        assert f'<message id="msg_{stored[-1].message_id}" role="assistant"' in text
        assert stored[-1].content.strip() in text and stored[0].content not in text
        assert restore(storage, "previous", max_tokens=200, limit=12)["context"] == ""  # no other session
    app.close()


def test_an_oversized_last_message_becomes_a_reference(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        _, stored = ingest(storage, "previous", [*texts(3, words=10), new_message(3, "huge " * 4000)])
        result = restore(storage, "new", max_tokens=300, limit=12)
        assert result["messages"][-1:] == [stored[-2].message_id]
        assert f'<message id="msg_{stored[-1].message_id}"' in result["context"]
        assert f'omitted_tokens="{stored[-1].token_count}"/>' in result["context"] and "huge huge" not in \
            result["context"]
        assert result["tokens"] <= 300 and result["tokens"] >= REFERENCE_TOKENS
    app.close()


def test_a_compacted_session_gets_its_own_summaries_then_others_get_summaries_and_tail(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        cid, _ = ingest(storage, "long", texts(60))
        CompactionEngine(app).compact(storage, cid, Mode.FULL)
        own = restore(storage, "long", max_tokens=4000, limit=12)
        assert own["summaries"] and own["messages"] == [] and own["from_session"] == "long"
        assert "previous session" not in own["context"]
        other = restore(storage, "next", max_tokens=4000, limit=12)
        assert other["from_session"] == "long" and other["summaries"]
        assert other["tokens"] <= 4000 and "previous session long" in other["context"]
    app.close()


def test_the_hook_source_decides_what_a_session_receives(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    with app.project() as storage:
        ingest(storage, "earlier", texts(6, words=10))
        cid, stored = ingest(storage, "current", texts(60))
        # resumed with nothing compacted: the agent reloads its transcript, LCM adds nothing
        assert restore(storage, "current", max_tokens=4000, limit=12, source="resume")["context"] == ""
        # a new session started now gets the most recent other conversation
        assert restore(storage, "fresh", max_tokens=4000, limit=12, source="startup")["from_session"] == "current"
        CompactionEngine(app).compact(storage, cid, Mode.FULL)
        resumed = restore(storage, "current", max_tokens=4000, limit=12, source="resume")
        assert resumed["summaries"] and resumed["messages"] == []
        compacted = restore(storage, "current", max_tokens=4000, limit=12, source="compact")
        assert compacted["summaries"] and compacted["messages"]  # what the agent's own summary replaced
        assert compacted["messages"][-1] == stored[-1].message_id and compacted["from_session"] == "current"
        assert "previous session" not in compacted["context"]
    app.close()
