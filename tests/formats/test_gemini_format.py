"""The contrib Gemini CLI format's mapping, loaded straight from its source file (no install needed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lcm_framework.storage.models import PartKind, Role

from .helpers import REPO, read_jsonl

SOURCE = REPO / "contrib" / "lcm-format-gemini" / "lcm_format_gemini" / "format.py"
SAMPLE = REPO / "contrib" / "lcm-format-gemini" / "samples" / "session-2025-11-03T10-15-4a9c2e1f.jsonl"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_gemini_format_under_test", SOURCE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEMINI = _load()
FORMAT: Any = GEMINI.FORMAT


def test_sample_maps_every_line() -> None:
    records = read_jsonl(SAMPLE)
    mapped = [FORMAT.map_record(r) for r in records]
    header = mapped[0]
    assert (header.session_id, header.cwd) == ("4a9c2e1f-6b3d-4e8a-9f1c-2d7b5e0a3c86", "/home/dev/weatherbot")
    kinds = [m.metadata["recordType"] for m in mapped]
    assert kinds.count("session") == 1 and kinds.count("update") == 3
    for record, m in zip(records, mapped, strict=True):
        assert m.message is None or ("id" in record and "type" in record)
    rewritten = [m.metadata["id"] for m in mapped if m.message and m.message.role is Role.ASSISTANT]
    assert len(rewritten) > len(set(rewritten))  # Gemini CLI re-appends a message when it changes
    assert mapped[-1].kind == "client_meta" and mapped[-1].message is None  # the closing info notice


def test_gemini_message_parts() -> None:
    record = {
        "id": "g",
        "timestamp": "2025-11-03T10:15:05.402Z",
        "type": "gemini",
        "content": [{"text": "Running it.", "thought": False}, {"text": "hidden", "thought": True}],
        "thoughts": [{"subject": "Plan", "description": "Run tests", "timestamp": "t"}],
        "toolCalls": [
            {
                "id": "c1",
                "name": "run_shell_command",
                "args": {"command": "npm test"},
                "result": [
                    {
                        "functionResponse": {
                            "id": "c1",
                            "name": "run_shell_command",
                            "response": {"output": "Output: x\nExit Code: 2"},
                        }
                    }
                ],
                "status": "success",
            },
            {
                "id": "c2",
                "name": "read_file",
                "args": {"absolute_path": "/x"},
                "result": [
                    {"functionResponse": {"id": "c2", "name": "read_file", "response": {"error": "ENOENT: /x"}}}
                ],
                "status": "error",
            },
            {
                "id": "c3",
                "name": "glob",
                "args": {},
                "result": None,
                "status": "cancelled",
                "resultDisplay": "cancelled",
            },
        ],
        "model": "gemini-2.5-pro",
    }
    mapped = FORMAT.map_record(record)
    msg = mapped.message
    assert msg is not None and msg.role is Role.ASSISTANT and mapped.metadata["model"] == "gemini-2.5-pro"
    # the version with finished toolCalls stands for the calls only: its text and thoughts came with the first
    assert [p.kind for p in msg.parts] == [PartKind.TOOL_CALL, PartKind.TOOL_RESULT] * 3
    results = [p for p in msg.parts if p.kind is PartKind.TOOL_RESULT]
    assert [(p.tool_call_id, p.is_error, p.text) for p in results] == [
        ("c1", True, "Output: x\nExit Code: 2"),
        ("c2", True, "ENOENT: /x"),
        ("c3", False, "cancelled"),
    ]
    call = msg.parts[0]
    assert (
        "result" not in json.loads(call.raw_json or "") and json.loads(results[0].raw_json or "")[0]["functionResponse"]
    )
    assert msg.content.startswith('tool call run_shell_command: {"command":"npm test"}')
    first = FORMAT.map_record({k: v for k, v in record.items() if k != "toolCalls"}).message
    assert first is not None
    assert [p.kind for p in first.parts] == [PartKind.REASONING, PartKind.TEXT, PartKind.REASONING]
    assert first.parts[0].text == "Plan: Run tests" and first.content == "Running it." and "hidden" not in first.content
    empty = {"id": "g", "type": "gemini", "content": "", "thoughts": [], "tokens": {"input": 1}}
    assert FORMAT.map_record(empty).message is None  # a version with nothing in it yet


def test_user_content_shapes_and_notices() -> None:
    user = FORMAT.map_record({"id": "u", "timestamp": "2025-11-03T10:15:02Z", "type": "user", "content": "plain"})
    assert user.message is not None and (user.message.role, user.message.content) == (Role.USER, "plain")
    media = FORMAT.map_record(
        {
            "id": "u2",
            "type": "user",
            "content": [
                {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
                {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/x.pdf"}},
                {"functionCall": {"id": "f", "name": "n", "args": {"a": 1}}},
                {"executableCode": {"code": "print(1)"}},
                7,
            ],
        }
    ).message
    assert media is not None
    assert [p.kind for p in media.parts] == [
        PartKind.IMAGE,
        PartKind.FILE,
        PartKind.TOOL_CALL,
        PartKind.OTHER,
        PartKind.OTHER,
    ]
    assert media.content == '[image image/png]\n[file application/pdf]\ntool call n: {"a":1}'
    restated = FORMAT.map_record(
        {
            "id": "u3",
            "type": "user",
            "content": [{"functionResponse": {"id": "f", "name": "n", "response": {"output": "ok"}}}],
        }
    )
    assert restated.kind == "client_meta"
    only_results = restated.message
    assert only_results is None  # restated results: the calls' toolCalls entries hold them
    for kind in ("info", "warning", "error"):
        notice = FORMAT.map_record({"id": "n", "type": kind, "content": "Request cancelled."})
        assert (notice.message, notice.kind) == (None, "client_meta")


def test_native_only_lines() -> None:
    for record in (
        {"$set": {"summary": "s"}},
        {"$rewindTo": "g"},
        {"id": "x", "type": "future"},
        {"type": "user"},
        [],
        "x",
        {},
    ):
        assert FORMAT.map_record(record).message is None


def test_sniff_and_discovery(tmp_path: Path) -> None:
    assert FORMAT.sniff(read_jsonl(SAMPLE)[:5])
    claude = {"type": "user", "sessionId": "s", "uuid": "u", "projectHash": "h"}
    codex = {"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}
    for head in ([], [claude], [codex], [{"id": "m", "type": "user", "content": "x"}]):
        assert not FORMAT.sniff(head)
    assert FORMAT.default_roots({"GEMINI_CLI_HOME": str(tmp_path), "HOME": "/nowhere"}) == [
        tmp_path / ".gemini" / "tmp"
    ]
    root = tmp_path / ".gemini" / "tmp"
    for rel in (
        "proj-b/chats/session-2.jsonl",
        "proj-a/chats/session-1.jsonl",
        "proj-a/chats/parent/sub.jsonl",
        "proj-a/logs.jsonl",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    found = [p.relative_to(root).as_posix() for p in FORMAT.discover(root)]
    assert found == ["proj-a/chats/parent/sub.jsonl", "proj-a/chats/session-1.jsonl", "proj-b/chats/session-2.jsonl"]


def test_structural_samples_map() -> None:
    kinds = {p.kind for s in FORMAT.structural_samples() if (m := FORMAT.map_record(s).message) for p in m.parts}
    assert {PartKind.TEXT, PartKind.TOOL_CALL, PartKind.TOOL_RESULT, PartKind.REASONING} <= kinds


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
message_like = st.fixed_dictionaries(
    {
        "id": st.text(max_size=4),
        "type": st.sampled_from(["user", "gemini", "info", "x"]),
        "content": json_values,
        "thoughts": json_values,
        "toolCalls": json_values
        | st.lists(st.dictionaries(st.sampled_from(["id", "name", "args", "result", "status"]), json_values)),
    }
)


@settings(max_examples=80, deadline=None)
@given(st.one_of(json_values, message_like))
def test_map_record_never_raises(value: Any) -> None:
    mapped = FORMAT.map_record(value)
    if mapped.message is not None:
        assert all(p.raw_json is not None for p in mapped.message.parts)


REAL = REPO / "contrib" / "lcm-format-gemini" / "samples" / "gemini-cli-0.61.0"


def test_sessions_gemini_cli_wrote_map_each_turn_once() -> None:
    first = [FORMAT.map_record(r) for r in read_jsonl(REAL / "session-2026-12-01T22-55-2040545f.jsonl")]
    messages = [m.message for m in first if m.message is not None]
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.ASSISTANT]
    assert [p.kind for p in messages[1].parts] == [PartKind.TOOL_CALL, PartKind.TOOL_RESULT]
    assert "Output: marker-2f7c" in (messages[1].parts[1].text or "")
    kinds = [m.kind for m in first if m.kind]
    assert kinds == ["agent_scaffolding", "client_meta"]  # the session context; the restated function response
    second = [FORMAT.map_record(r) for r in read_jsonl(REAL / "session-2026-12-01T22-56-df2b720e.jsonl")]
    prompt = next(m.message for m in second if m.message is not None)
    assert prompt.content == "what did we echo before?"  # SessionStart's LCM context, prepended, is LCM's own
    assert [p.raw_json for p in prompt.parts] == ['{"text":"what did we echo before?"}']


def test_another_hooks_context_stays_as_client_authored_text() -> None:
    record = {"id": "u", "type": "user", "content": [
        {"text": "<hook_context>branch: main</hook_context>\n\nfix the build"},
        {"text": "<hook_context># Restored context (LCM): memory relevant to this prompt\n...</hook_context>"}]}
    message = FORMAT.map_record(record).message
    assert message is not None
    assert [(p.text, p.metadata) for p in message.parts] == [
        ("<hook_context>branch: main</hook_context>\n\n", '{"authored_by":"client"}'), ("fix the build", None)]
    only_lcm = FORMAT.map_record({"id": "u", "type": "user", "content": [record["content"][1]]})
    assert (only_lcm.kind, only_lcm.message) == ("lcm_context", None)


def test_history_restatements_and_sub_agent_runs(tmp_path: Path) -> None:
    context = {"id": "c", "type": "user", "content": [{"text": "<session_context>\nThis is the Gemini CLI."}]}
    assert FORMAT.map_record({"$set": {"messages": [context]}}).kind == "agent_scaffolding"
    summary = {"id": "s", "type": "user", "content": [{"text": "<state_snapshot>...</state_snapshot>"}]}
    assert FORMAT.map_record({"$set": {"messages": [context, summary]}}).kind == "client_meta"
    chats = tmp_path / "tmp" / "demo" / "chats"
    session = chats / "session-2026-12-01T10-00-5b0d3f2a.jsonl"
    run = chats / "5b0d3f2a-1111-4000-8000-000000000000" / "9e8d7c6b-2222-4000-8000-000000000000.jsonl"
    run.parent.mkdir(parents=True)
    session.write_text(json.dumps({"sessionId": run.parent.name, "projectHash": "h", "kind": "main"}) + "\n")
    run.write_text(json.dumps({"sessionId": run.stem, "projectHash": "h", "kind": "subagent"}) + "\n")
    assert FORMAT.companions(session) == [run] and FORMAT.companions(run) == []
    spawned = FORMAT.source_subagent(run)
    assert (spawned.parent_session_id, spawned.agent_id, spawned.own_session) == (run.parent.name, run.stem, True)
    assert FORMAT.source_subagent(session) is None
