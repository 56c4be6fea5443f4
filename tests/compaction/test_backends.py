"""Compaction, assembly and recall on every storage backend of the conformance harnesses."""

from __future__ import annotations

from pathlib import Path

from lcm_framework.assembly import assemble
from lcm_framework.compaction import CompactionEngine, Mode
from lcm_framework.recall import expand, grep, parse_ref, verify
from lcm_framework.storage.contracts import StorageBackendFactory
from tests.conformance.conftest import factory, make_ref

from .helpers import ingest, project_dir, scripted_app, texts

__all__ = ["factory"]  # the conformance fixture: one run per backend harness


def test_compaction_and_recall_on_every_backend(factory: StorageBackendFactory, tmp_path: Path) -> None:
    app, _ = scripted_app(project_dir(tmp_path), {})
    storage = factory.open_project(make_ref("compaction"))
    try:
        cid, stored = ingest(storage, "s1", texts(60))
        report = CompactionEngine(app).compact(storage, cid, Mode.FULL)
        assert report.created_by_depth.get(0, 0) >= 4 and report.created_by_depth.get(1, 0) >= 1
        assert verify(storage).ok
        coarsest = assemble(storage, cid, budget=storage.context.token_total(cid), fresh_tail_count=4)
        assert coarsest.message_ids == [m.message_id for m in stored[-4:]] and coarsest.summary_ids
        roomy = assemble(storage, cid, budget=100_000, fresh_tail_count=4)  # the DAG read back to every message
        assert roomy.message_ids == [m.message_id for m in stored] and roomy.summary_ids == []
        found = grep(storage, "fact7", conversation_ids=[cid])
        leaf = next(g.summary_id for g in found.groups if g.summary_id)
        assert leaf is not None
        expansion = expand(storage, parse_ref(leaf), include_messages=True, token_cap=10**9)
        assert expansion is not None
        assert any(node.content == stored[7].content for node in expansion.messages())
        assert CompactionEngine(app).compact(storage, cid, Mode.FULL).action_taken is False
    finally:
        storage.close()
        app.close()
