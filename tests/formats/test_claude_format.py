"""Claude Code format: every block and record shape, odd input, sniffing and discovery."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lcm_format_claude.format import FORMAT

from lcm_framework.storage.models import PartKind, Role
from lcm_framework.transcripts.contracts import SubagentRef
from tests.conftest import CLAUDE_SAMPLE, CLAUDE_SESSIONS

from .helpers import read_jsonl

BASE = {
    "parentUuid": "p-1",
    "isSidechain": False,
    "cwd": "/srv/app",
    "sessionId": "s-1",
    "version": "2.0.28",
    "gitBranch": "fix/port",
    "uuid": "u-1",
    "timestamp": "2025-09-03T00:47:19.293Z",
}


def record(type_: str, content: Any = None, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {**BASE, "type": type_, **extra}
    if content is not None:
        role = "assistant" if type_ == "assistant" else "user"
        rec["message"] = {"role": role, "content": content}
    return rec


def test_every_block_kind_becomes_one_part() -> None:
    blocks = [
        {"type": "thinking", "thinking": "The port is taken.", "signature": "c2ln"},
        {"type": "redacted_thinking", "data": "b3BhcXVl"},
        {"type": "text", "text": "Checking the port."},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "lsof -i :8432"}},
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "EADDRINUSE"}},
        {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": [{"type": "web_search_result"}]},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "document", "title": "spec.pdf", "source": {"type": "base64", "data": "JVBERi0="}},
        {"type": "future_block", "text": "kept", "extra": [1, 2]},
        "bare string",
        42,
    ]
    mapped = FORMAT.map_record(record("assistant", blocks))
    msg = mapped.message
    assert msg is not None and msg.role is Role.ASSISTANT
    assert [p.kind for p in msg.parts] == [
        PartKind.REASONING,
        PartKind.REASONING,
        PartKind.TEXT,
        PartKind.TOOL_CALL,
        PartKind.TOOL_CALL,
        PartKind.TOOL_RESULT,
        PartKind.IMAGE,
        PartKind.FILE,
        PartKind.OTHER,
        PartKind.TEXT,
        PartKind.OTHER,
    ]
    assert [json.loads(p.raw_json or "") for p in msg.parts] == blocks
    call = msg.parts[3]
    assert (call.tool_call_id, call.tool_name, json.loads(call.text or "")) == (
        "toolu_1",
        "Bash",
        {"command": "lsof -i :8432"},
    )
    assert msg.parts[0].text == "The port is taken." and msg.parts[1].text is None
    assert msg.parts[8].text == "kept"
    assert msg.content == (
        "Checking the port.\n"
        'tool call Bash: {"command":"lsof -i :8432"}\n'
        'tool call web_search: {"query":"EADDRINUSE"}\n'
        "[image]\n[document spec.pdf]\nbare string"
    )
    assert "The port is taken." not in msg.content  # reasoning lives in parts only
    assert msg.token_count == (len(msg.content) + 3) // 4
    assert mapped.metadata["gitBranch"] == "fix/port"


def test_tool_result_only_user_record_is_a_tool_message_with_errors_flagged() -> None:
    content = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [{"type": "text", "text": "Error: listen EADDRINUSE"}, {"type": "image", "source": {}}],
            "is_error": True,
        },
        {"type": "tool_result", "tool_use_id": "toolu_3"},
    ]
    msg = FORMAT.map_record(record("user", content, toolUseResult={"stdout": "ok"})).message
    assert msg is not None and msg.role is Role.TOOL
    assert [(p.tool_call_id, p.is_error, p.text) for p in msg.parts] == [
        ("toolu_1", False, "ok"),
        ("toolu_2", True, "Error: listen EADDRINUSE\n[image]"),
        ("toolu_3", False, ""),
    ]
    assert msg.content == "ok\nError: listen EADDRINUSE\n[image]"


def test_mixed_user_record_stays_user() -> None:
    content = [{"type": "tool_result", "tool_use_id": "t", "content": "x"}, {"type": "text", "text": "and"}]
    msg = FORMAT.map_record(record("user", content)).message
    assert msg is not None and msg.role is Role.USER


def test_plain_string_and_empty_content() -> None:
    msg = FORMAT.map_record(record("user", "fix the tests")).message
    assert msg is not None and msg.content == "fix the tests" and msg.token_count == 4
    assert msg.parts[0].raw_json == '"fix the tests"'
    empty = FORMAT.map_record(record("assistant", [])).message
    assert empty is not None and (empty.content, empty.token_count, tuple(empty.parts)) == ("", 0, ())
    tiny = FORMAT.map_record(record("user", "ok")).message
    assert tiny is not None and tiny.token_count == 1


def test_system_records_are_client_metadata() -> None:
    rec = {**BASE, "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}
    mapped = FORMAT.map_record(rec)
    assert mapped.message is None and mapped.kind == "client_meta"
    assert mapped.metadata["subtype"] == "compact_boundary"
    assert mapped.timestamp == datetime(2025, 9, 3, 0, 47, 19, 293000, tzinfo=UTC)


def test_scaffolding_kinds() -> None:
    """What Claude Code 2.1.197 writes around `/compact` (see tests/formats/agent_written/)."""
    caveat = "<local-command-caveat>Caveat: The messages below were generated by the user</local-command-caveat>"
    kinds = {
        "caveat": (record("user", caveat, isMeta=True), "client_meta"),
        "command": (record("user", "<command-name>/compact</command-name>\n<command-message>compact"
                           "</command-message>\n<command-args></command-args>"), "client_meta"),
        "stdout": (record("user", "<local-command-stdout>Compacted</local-command-stdout>"), "client_meta"),
        "summary": (record("user", "This session is being continued", isCompactSummary=True), "compact_summary"),
        "lcm": (record("user", [{"type": "text", "text": "# Restored context (LCM)\nsummaries"}]), "lcm_context"),
        "args": (record("user", "<command-name>/review</command-name>\n<command-args>the parser</command-args>"),
                 None),
        "expanded prompt": (record("user", "Please analyze this codebase", isMeta=True), None),
        "plain": (record("user", "fix the port clash"), None),
    }
    for name, (rec, kind) in kinds.items():
        mapped = FORMAT.map_record(rec)
        assert mapped.kind == kind, name
        assert (mapped.message is None) == (kind is not None), name


def test_native_only_records() -> None:
    native = [
        {"type": "summary", "summary": "Fix port clash", "leafUuid": "u-9"},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}, "isSnapshotUpdate": False},
        {"type": "queue-operation", "operation": "enqueue", "sessionId": "s-1", "timestamp": BASE["timestamp"]},
        {**BASE, "type": "progress", "data": {"type": "hook_progress"}},
        {**BASE, "type": "brand-new-type", "message": {"role": "user", "content": "x"}},
        {**BASE, "type": "user"},  # no message at all
        {**BASE, "type": "system", "subtype": "turn_duration", "durationMs": 5120},
        {**BASE, "type": "system", "subtype": "api_error", "level": "error", "error": {"status": 529}},
        {**BASE, "type": "assistant", "message": "not an object"},
        {**BASE, "type": "assistant", "message": {"role": "assistant", "model": "m"}},  # no content
    ]
    for rec in native:
        mapped = FORMAT.map_record(rec)
        assert mapped.message is None, rec
    queued = FORMAT.map_record(native[2])
    assert queued.session_id == "s-1" and queued.timestamp is not None


def test_sidechain_records_are_messages_of_their_run() -> None:
    prompt = FORMAT.map_record(record("user", "sub-agent prompt", isSidechain=True, parentUuid=None))
    reply = FORMAT.map_record(record("assistant", [{"type": "text", "text": "done"}], isSidechain=True,
                                     uuid="u-2", parentUuid="u-1", agentId="a1b2"))
    assert prompt.message is not None and prompt.message.content == "sub-agent prompt"
    assert prompt.metadata["isSidechain"] == "true"
    assert prompt.subagent == SubagentRef(None, "u-1", None)
    assert reply.subagent == SubagentRef("a1b2", "u-2", "u-1")
    assert FORMAT.map_record(record("user", "main thread")).subagent is None


def test_non_object_records_and_bad_fields_never_raise() -> None:
    for rec in ([], [1, 2], {}, {"type": 3}, {"type": "user", "timestamp": "yesterday", "sessionId": 7}):
        mapped = FORMAT.map_record(rec)
        assert mapped.message is None and mapped.session_id is None and mapped.timestamp is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
shaped = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["user", "assistant", "system", "summary", "x"]),
        "message": st.fixed_dictionaries({"content": json_values}) | json_values,
        "content": json_values,
        "timestamp": json_values,
    }
)


@settings(max_examples=80, deadline=None)
@given(st.one_of(json_values, shaped))
def test_map_record_never_raises(value: Any) -> None:
    mapped = FORMAT.map_record(value)
    if mapped.message is not None:
        assert mapped.message.token_count >= 0
        assert all(p.raw_json is not None for p in mapped.message.parts)


def test_sniff_accepts_claude_heads_and_rejects_others() -> None:
    for path in [CLAUDE_SAMPLE, *sorted(CLAUDE_SESSIONS.glob("*.jsonl"))]:
        assert FORMAT.sniff(read_jsonl(path)[:5]), path
    assert FORMAT.sniff([{"type": "summary", "summary": "t", "leafUuid": "u"}])
    codex = {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}}
    for head in ([], [codex], [{"type": "user"}], [[1, 2]], [{"role": "user", "content": "hi"}], ["text"]):
        assert not FORMAT.sniff(head), head
    assert not FORMAT.sniff([record("user", "x"), {**codex, "type": "response_item"}])


def test_default_roots_respect_claude_config_dir(tmp_path: Path) -> None:
    assert FORMAT.default_roots({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "HOME": "/nowhere"}) == [
        tmp_path / "cfg" / "projects"
    ]
    assert FORMAT.default_roots({"HOME": str(tmp_path)}) == [tmp_path / ".claude" / "projects"]


def test_discover_is_recursive_and_sorted(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    for rel in ("-srv-b/2.jsonl", "-srv-a/1.jsonl", "-srv-a/s1/subagents/agent-1.jsonl", "-srv-a/notes.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    (root / "dir.jsonl").mkdir()
    found = [p.relative_to(root).as_posix() for p in FORMAT.discover(root)]
    assert found == ["-srv-a/1.jsonl", "-srv-a/s1/subagents/agent-1.jsonl", "-srv-b/2.jsonl"]
    assert list(FORMAT.discover(tmp_path / "missing")) == []


def test_structural_samples_map_and_cover_every_part_kind() -> None:
    kinds = set()
    for sample in FORMAT.structural_samples():
        mapped = FORMAT.map_record(sample)
        if mapped.message is not None:
            kinds.update(p.kind for p in mapped.message.parts)
    assert kinds >= {
        PartKind.TEXT,
        PartKind.TOOL_CALL,
        PartKind.TOOL_RESULT,
        PartKind.REASONING,
        PartKind.IMAGE,
        PartKind.FILE,
    }
