"""Large blocks stored once as private files, referenced in the model-facing views, retrievable in full."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lcm_framework.assembly import assemble_context
from lcm_framework.compaction import CompactionEngine, Mode
from lcm_framework.recall import describe, parse_ref
from lcm_framework.safe_paths import UnsafeDestinationError, atomic_write_private
from lcm_framework.storage.models import NewPart, PartKind

from .helpers import ingest, make_app, new_message, project_dir, texts

BIG = "\n".join(f"def function_{i}(value):\n    return value * {i}  # needle-{i}" for i in range(3000))


def _big_message(index: int) -> object:
    body = f'<file name="src/big.py">\n{BIG}\n</file>'
    text = f"here is the file\n{body}"
    return new_message(index, text, parts=[NewPart(PartKind.TOOL_RESULT, text=text, tool_call_id="toolu_1")])


def test_large_block_is_externalized_in_compaction_and_assembly(tmp_path: Path, lcm_env: Path) -> None:
    app = make_app(project_dir(tmp_path), {"compaction.large_file_token_threshold": 1000,
                                           "compaction.leaf_chunk_tokens": 100_000})
    with app.project() as storage:
        messages = [*texts(2), _big_message(2), *texts(8, start=3)]
        cid, stored = ingest(storage, "s1", messages)
        CompactionEngine(app).compact(storage, cid, Mode.FULL)
        files = storage.large_files.list_files(cid)
        assert len(files) == 1
        record = files[0]
        assert record.file_name == "src/big.py" and record.file_id.startswith("file_")
        assert record.exploration_summary and record.message_id == stored[2].message_id
        path = lcm_env / "projects" / storage.project_id / "files" / f"{record.file_id}.py"
        assert path.read_text() == f"\n{BIG}\n"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        leaf = storage.summaries.list_summaries(cid, depth=0)[0]
        assert record.file_id in leaf.file_ids
        assert storage.conversations.get_messages([stored[2].message_id])[0].content == messages[2].content
        described = describe(storage, parse_ref(record.file_id), app.config.home)
        assert described is not None and described.content == f"\n{BIG}\n"


def test_assembly_references_large_tool_results_in_the_fresh_tail(tmp_path: Path) -> None:
    app = make_app(project_dir(tmp_path), {"compaction.large_file_token_threshold": 1000})
    with app.project() as storage:
        tool_use = new_message(1, "run", parts=[NewPart(PartKind.TOOL_CALL, text='{"cmd": "cat big.py"}',
                                                        tool_call_id="toolu_1", tool_name="Bash")])
        cid, _ = ingest(storage, "s1", [new_message(0, "show me"), tool_use, _big_message(2)])
        context = assemble_context(app, storage, cid, budget_tokens=100_000)
        result = context.messages[-1]["content"][0]
        assert result["type"] == "tool_result" and result["content"].startswith("here is the file\n[Large file file_")
        assert "lcm describe file_" in result["content"] and "needle-2999" not in result["content"]
        assert "Exploration: src/big.py: 6001 lines" in result["content"]  # what the file is, in the reference
        assert "def function_0 (line 2)" in result["content"]
        assert len(storage.large_files.list_files(cid)) == 1
        assemble_context(app, storage, cid, budget_tokens=100_000)
        assert len(storage.large_files.list_files(cid)) == 1  # stored once


def test_atomic_private_write_no_clobber_and_replace(tmp_path: Path) -> None:
    target = tmp_path / "files" / "a.txt"
    atomic_write_private(target, b"one", require_absent=True)
    with pytest.raises(FileExistsError):
        atomic_write_private(target, b"two", require_absent=True)
    assert target.read_bytes() == b"one" and stat.S_IMODE(os.stat(target).st_mode) == 0o600
    atomic_write_private(target, b"three")
    assert target.read_bytes() == b"three"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.txt"]  # no temp files left
    os.link(target, tmp_path / "files" / "b.txt")
    with pytest.raises(UnsafeDestinationError):
        atomic_write_private(target, b"four")
    link = tmp_path / "files" / "c.txt"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeDestinationError):
        atomic_write_private(link, b"five")
    assert not (tmp_path / "elsewhere").exists()


def test_a_huge_tool_input_is_referenced_too(tmp_path: Path) -> None:
    import json

    app = make_app(project_dir(tmp_path), {"compaction.large_file_token_threshold": 1000})
    arguments = json.dumps({"file_path": "src/big.py", "content": BIG})
    write = NewPart(PartKind.TOOL_CALL, text=arguments, tool_call_id="toolu_w", tool_name="Write")
    done = NewPart(PartKind.TOOL_RESULT, text="File created", tool_call_id="toolu_w")
    with app.project() as storage:
        cid, _ = ingest(storage, "s1", [new_message(0, "write it"), new_message(1, arguments, parts=[write]),
                                        new_message(2, "ok", parts=[done])])
        turns = assemble_context(app, storage, cid, budget_tokens=100_000).messages
        tool_use = turns[1]["content"][0]
        assert tool_use["name"] == "Write" and set(tool_use["input"]) == {"lcm_large_input"}
        assert tool_use["input"]["lcm_large_input"].startswith("[Large file file_")
        record = storage.large_files.list_files(cid)[0]
        assert describe(storage, parse_ref(record.file_id), app.config.home).content == arguments  # type: ignore[union-attr]
