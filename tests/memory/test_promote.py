"""Promotion: the offline extractor, promotion after compaction, idempotence, and the model path."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lcm_framework.compaction import CompactionEngine
from lcm_framework.kernel.hookspecs import hookimpl
from lcm_framework.memory.extract import extract
from lcm_framework.memory.promote import after_compaction, parse_answer, promote_project
from lcm_framework.storage.lineage import parse
from lcm_framework.storage.models import Message, MessagePart, PartKind, Role
from lcm_framework.summarize.contracts import SummaryRequest
from tests.compaction.helpers import ingest, make_app, new_message, project_dir, texts
from tests.conftest import run_lcm

SAMPLES = Path(__file__).resolve().parents[2] / "formats" / "samples" / "claude" / "projects" / "-home-dev-orders-api"
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def message(mid: int, role: Role, content: str) -> Message:
    return Message(mid, 1, mid, role, content, 10, NOW)


def part(mid: int, kind: PartKind, call: str, text: str, *, tool: str | None = None) -> MessagePart:
    return MessagePart(f"p{mid}", mid, 0, kind, text, call, tool, False, None, None)


def test_the_extractor_finds_each_kind_and_ignores_chatter() -> None:
    messages = [
        message(1, Role.USER, "Please never push to main directly. Can you look at the failing build?"),
        message(2, Role.ASSISTANT, "Let me look. The root cause was a stale lock file in build/cache.lock."),
        message(3, Role.ASSISTANT, "We decided to use uv instead of pip for every install."),
        message(4, Role.ASSISTANT, "Never mind, thanks!"),
        message(5, Role.ASSISTANT, "tool call Bash"),
        message(6, Role.TOOL, "12 passed in 3.1s"),
        message(7, Role.ASSISTANT, "tool call Bash"),
        message(8, Role.TOOL, "2 failed, 10 passed"),
    ]
    parts = {5: [part(5, PartKind.TOOL_CALL, "c1", '{"command": "make test"}', tool="Bash")],
             6: [part(6, PartKind.TOOL_RESULT, "c1", "12 passed in 3.1s")],
             7: [part(7, PartKind.TOOL_CALL, "c2", '{"command": "make lint"}', tool="Bash")],
             8: [part(8, PartKind.TOOL_RESULT, "c2", "2 failed, 10 passed")]}
    found = {(c.kind, c.text): c for c in extract(messages, parts)}
    assert set(found) == {
        ("constraint", "Please never push to main directly."),
        ("root_cause", "The root cause was a stale lock file in build/cache.lock."),
        ("decision", "We decided to use uv instead of pip for every install."),
        ("command", "Command that worked: `make test`"),
    }
    assert found[("root_cause", "The root cause was a stale lock file in build/cache.lock.")].tags == (
        "build/cache.lock", "root_cause")
    assert found[("command", "Command that worked: `make test`")].message_ids == (5, 6)


def test_compaction_promotes_with_lineage_and_promoting_again_changes_nothing(tmp_path: Path) -> None:
    root = project_dir(tmp_path)
    env = {"LCM_HOME": str(tmp_path / "home")}
    for session in sorted(SAMPLES.glob("*.jsonl")):
        assert run_lcm("import", str(session), "--project", str(root), cwd=root, env=env).returncode == 0
    small = ["-c", "compaction.leaf_chunk_tokens=1000", "-c", "compaction.leaf_target_tokens=100",
             "-c", "compaction.leaf_min_fanout=3", "-c", "compaction.condensed_target_tokens=100",
             "-c", "compaction.fresh_tail_count=4"]
    done = run_lcm(*small, "compact", "--all", "--json", cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    promotion = json.loads(done.stdout)["promotion"]
    assert promotion["created"] and promotion["extractor"] == "offline"
    listed = json.loads(run_lcm("memory", "list", "--json", cwd=root, env=env).stdout)["memories"]
    root_cause = next(m for m in listed if m["lineage"]["kind"] == "root_cause")
    assert "8432" in root_cause["content"] and root_cause["lineage"]["origin"] == "promotion"
    described = json.loads(run_lcm("describe", root_cause["id"], "--json", cwd=root, env=env).stdout)
    assert described["lineage"]["summaries"] == root_cause["lineage"]["summaries"]
    expanded = json.loads(run_lcm("expand", root_cause["id"], "--json", cwd=root, env=env).stdout)
    assert any("Root cause" in n["content"] for n in expanded["nodes"])  # the original message
    again = json.loads(run_lcm("promote", "--json", cwd=root, env=env).stdout)[0]
    assert again["summaries"] > 0 and again["created"] == [] and again["reinforced"] == []
    after = json.loads(run_lcm("memory", "list", "--json", cwd=root, env=env).stdout)["memories"]
    assert [(m["id"], m["confidence"]) for m in after] == [(m["id"], m["confidence"]) for m in listed]


def test_the_same_insight_from_another_summary_reinforces(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path))
    first_text = "The root cause was the stale cache in build/cache.lock and we cleared it."
    reworded = "Root cause was the stale build/cache.lock cache; we cleared it."
    with app.project() as storage:
        cid, _ = ingest(storage, "one", [new_message(0, first_text), *texts(12, start=1)])
        cid2, _ = ingest(storage, "two", [new_message(0, reworded), *texts(12, start=1)])
        started = datetime.now(UTC)
        engine = CompactionEngine(app)
        first = after_compaction(app, storage, [engine.compact(storage, cid)], started)
        second = after_compaction(app, storage, [engine.compact(storage, cid2)], started)
        assert first is not None and second is not None
        assert len(first.created) == 1 and second.created == [] and second.reinforced == first.created
        memory = storage.promoted_memory.get_memory(first.created[0])
        assert memory is not None and memory.confidence > 0.4
    app.close()


@dataclass
class InsightModel:
    """A stand-in model: JSON lines for the promote prompt, a short text for summaries."""

    name: str = "insight-model"
    prompts: list[str] = field(default_factory=list)

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    def summarize(self, request: SummaryRequest) -> str:
        if "durable insights" in request.prompt:
            self.prompts.append(request.prompt)
            return "\n".join([
                json.dumps({"kind": "decision", "text": "Pagination uses opaque cursors", "tags": ["api/orders.py"]}),
                "not json at all",
                json.dumps({"kind": "gossip", "text": "ignored kind"}),
            ])
        return f"summary: {request.segment[:60]}"


class InsightPlugin:
    def __init__(self, model: InsightModel) -> None:
        self.model = model

    @hookimpl
    def lcm_register_summarizers(self, register: Any) -> None:
        register("insight-model", lambda _config: self.model)


def test_with_a_model_the_promote_template_is_used(tmp_path: Path) -> None:
    model = InsightModel()
    app = make_app(project_dir(tmp_path), {"summarizer.provider": "insight-model"},
                   extra=[("insight_test", InsightPlugin(model))])
    with app.project() as storage:
        cid, _ = ingest(storage, "s", texts(12))
        CompactionEngine(app).compact(storage, cid)
        report = promote_project(app, storage)
        assert report.extractor == "model" and len(report.created) == 1
        memory = storage.promoted_memory.get_memory(report.created[0])
        assert memory is not None and memory.content == "Pagination uses opaque cursors"
        assert memory.tags == ("api/orders.py", "decision")
        lineage = parse(memory.metadata)
        assert lineage.kind == "decision" and lineage.summaries and lineage.messages
    assert model.prompts and "<segment>" in model.prompts[0] and "fact0" in model.prompts[0]
    app.close()


def test_parse_answer_keeps_only_well_formed_insights() -> None:
    answer = '{"kind": "command", "text": "  make   test  ", "tags": ["make", 3]}\n{"kind": "x", "text": "y"}\n[]'
    (only,) = parse_answer(answer, (1,))
    assert (only.text, only.kind, only.tags, only.message_ids) == ("make test", "command", ("make", "command"), (1,))
