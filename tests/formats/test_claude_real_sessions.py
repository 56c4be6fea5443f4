"""The real Claude Code sessions in shared testdata map completely and faithfully."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from lcm_format_claude.format import FORMAT

from lcm_framework.storage.models import PartKind, Role
from tests.conftest import CLAUDE_SESSIONS, shared_testdata

from .helpers import map_all, messages, read_jsonl, unpaired_calls

FILES = sorted(CLAUDE_SESSIONS.glob("*.jsonl")) or [CLAUDE_SESSIONS / "absent"]
"""The sessions; absent, one placeholder, so each test is skipped naming the folder rather than left without cases."""


@pytest.fixture(autouse=True)
def _real_sessions() -> None:
    shared_testdata(CLAUDE_SESSIONS)


def test_testdata_present() -> None:
    assert len(FILES) == 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_line_maps_to_a_message_or_a_native_record(path: Path) -> None:
    records = read_jsonl(path)
    assert len(records) == sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    for record in records:
        mapped = FORMAT.map_record(record)
        turn = record["type"] in {"user", "assistant"}
        assert (mapped.message is not None) == (turn and mapped.kind is None), record.get("uuid")
        assert (mapped.subagent is not None) == bool(record.get("isSidechain"))
        if record["type"] != "summary":
            assert mapped.session_id == record["sessionId"]
            assert mapped.cwd == record["cwd"]
            assert mapped.timestamp is not None and mapped.timestamp.tzinfo is not None
            assert mapped.metadata["uuid"] == record["uuid"]
            assert mapped.metadata["version"] == record["version"]
            assert mapped.metadata["gitBranch"] == record["gitBranch"]
        else:
            assert mapped.metadata == {"type": "summary", "leafUuid": record["leafUuid"]}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_parts_keep_every_block_verbatim(path: Path) -> None:
    for record in read_jsonl(path):
        mapped = FORMAT.map_record(record)
        if mapped.message is None:
            continue
        content = record["message"]["content"]
        blocks = content if isinstance(content, list) else [content]
        assert [json.loads(p.raw_json or "null") for p in mapped.message.parts] == blocks
        assert mapped.message.created_at == mapped.timestamp
        if mapped.message.content:
            assert mapped.message.token_count == (len(mapped.message.content) + 3) // 4


def test_record_types_seen_and_sidechains_marked_with_their_run() -> None:
    seen: Counter[tuple[str, bool]] = Counter()
    for path in FILES:
        for record in read_jsonl(path):
            seen[(record["type"], bool(record.get("isSidechain")))] += 1
            if record.get("isSidechain"):
                ref = FORMAT.map_record(record).subagent
                assert ref is not None and (ref.record_id, ref.parent_record_id) == (record["uuid"],
                                                                                      record["parentUuid"])
    assert set(seen) == {
        ("user", False),
        ("user", True),
        ("assistant", False),
        ("assistant", True),
        ("summary", False),
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_tool_use_has_its_tool_result(path: Path) -> None:
    msgs = messages(map_all(FORMAT, read_jsonl(path)))
    assert unpaired_calls(msgs) == (set(), set())


def test_tool_results_errors_and_roles() -> None:
    records = [r for p in FILES for r in read_jsonl(p) if not r.get("isSidechain")]
    msgs = messages(map_all(FORMAT, records))
    results = [part for m in msgs for part in m.parts if part.kind is PartKind.TOOL_RESULT]
    calls = [part for m in msgs for part in m.parts if part.kind is PartKind.TOOL_CALL]
    raw_errors = sum(
        1
        for r in records
        if isinstance(r.get("message", {}).get("content"), list)
        for b in r["message"]["content"]
        if b.get("type") == "tool_result" and b.get("is_error") is True
    )
    assert len(calls) == len(results) == 36
    assert len(msgs) == 91 and sum(len(read_jsonl(p)) for p in FILES) == 524  # 92 turns, one /init echo
    assert sum(p.is_error for p in results) == raw_errors > 0
    assert all(p.tool_name for p in calls)
    tool_msgs = [m for m in msgs if m.role is Role.TOOL]
    assert tool_msgs and all(all(p.kind is PartKind.TOOL_RESULT for p in m.parts) for m in tool_msgs)
    error = next(p for p in results if p.is_error)
    assert error.text and error.text in next(m.content for m in msgs if error in m.parts)


def test_slash_command_echoes_are_client_metadata_but_their_arguments_and_prompts_are_turns() -> None:
    kinds = Counter((r["type"], FORMAT.map_record(r).kind) for p in FILES for r in read_jsonl(p)
                    if not r.get("isSidechain"))
    assert kinds[("user", "client_meta")] == 1  # the bare `/init` echo
    assert sum(n for (_, kind), n in kinds.items() if kind) == 1
    with_args = [r for p in FILES for r in read_jsonl(p) if "<command-args>" in str(r.get("message", {}))
                 and not r.get("isSidechain")]
    assert with_args and all(FORMAT.map_record(r).message is not None for r in with_args)
    expanded = [r for p in FILES for r in read_jsonl(p) if r.get("isMeta") is True]
    assert expanded and all(FORMAT.map_record(r).message is not None for r in expanded)


def test_plain_string_content_and_nested_result_text() -> None:
    records = [r for path in FILES for r in read_jsonl(path)]
    plain = next(r for r in records if r["type"] == "user" and isinstance(r["message"]["content"], str)
                 and FORMAT.map_record(r).message is not None)
    first = FORMAT.map_record(plain).message
    assert first is not None and first.role is Role.USER
    assert first.content == plain["message"]["content"]
    assert [p.kind for p in first.parts] == [PartKind.TEXT]
    big = read_jsonl(CLAUDE_SESSIONS / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    nested = next(
        r
        for r in big
        if r["type"] == "user"
        and not r.get("isSidechain")
        and isinstance(r["message"]["content"], list)
        and any(isinstance(b.get("content"), list) for b in r["message"]["content"])
    )
    mapped = FORMAT.map_record(nested).message
    assert mapped is not None and mapped.role is Role.TOOL
    block = next(b for b in nested["message"]["content"] if isinstance(b.get("content"), list))
    assert mapped.parts[0].text == "\n".join(item["text"] for item in block["content"])


def test_assistant_metadata_has_model_and_message_id() -> None:
    records = read_jsonl(CLAUDE_SESSIONS / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assistant = next(r for r in records if r["type"] == "assistant")
    mapped = FORMAT.map_record(assistant)
    assert mapped.metadata["model"] == assistant["message"]["model"]
    assert mapped.metadata["messageId"] == assistant["message"]["id"]
    assert mapped.metadata["parentUuid"] == assistant["parentUuid"]
    assert mapped.metadata["isSidechain"] == "false"


def test_sidechain_tool_calls_are_paired_too() -> None:
    """Sub-agent turns are messages of their runs, and their calls pair up as well."""
    sidechain = [r for p in FILES for r in read_jsonl(p) if r.get("isSidechain")]
    msgs = messages(map_all(FORMAT, sidechain))
    calls = {part.tool_call_id for m in msgs for part in m.parts if part.kind is PartKind.TOOL_CALL}
    assert len(calls) == 164
    assert unpaired_calls(msgs) == (set(), set())
