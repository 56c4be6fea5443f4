"""Codex rollout format: envelopes, response items, tool pairing, sniffing and discovery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lcm_format_codex.format import FORMAT
from lcm_format_codex.items import MAPPERS, map_response_item, tool_output

from lcm_framework.storage.models import PartKind, Role

from .helpers import map_all, messages, unpaired_calls

TS = "2025-10-14T09:12:03.512Z"
SESSION_ID = "0199e1c2-7d3a-7b40-9a51-3f0c2d8e4b17"


def env(type_: str, payload: Any) -> dict[str, Any]:
    return {"timestamp": TS, "type": type_, "payload": payload}


def item(**payload: Any) -> dict[str, Any]:
    return env("response_item", payload)


META = env(
    "session_meta",
    {
        "id": SESSION_ID,
        "timestamp": TS,
        "cwd": "/home/dev/ledger",
        "originator": "codex_cli_rs",
        "cli_version": "0.46.0",
        "instructions": None,
        "source": "cli",
        "model_provider": "openai",
        "git": {"commit_hash": "9f2c1e0", "branch": "fix/overflow", "repository_url": "git@example.com:dev/ledger.git"},
    },
)


def test_session_meta_gives_identity_cwd_and_git() -> None:
    mapped = FORMAT.map_record(META)
    assert (mapped.session_id, mapped.cwd, mapped.message) == (SESSION_ID, "/home/dev/ledger", None)
    assert mapped.timestamp is not None and mapped.timestamp.isoformat() == "2025-10-14T09:12:03.512000+00:00"
    assert mapped.metadata == {
        "type": "session_meta",
        "sessionId": SESSION_ID,
        "sessionStartedAt": TS,
        "originator": "codex_cli_rs",
        "cliVersion": "0.46.0",
        "modelProvider": "openai",
        "source": "cli",
        "gitCommit": "9f2c1e0",
        "gitBranch": "fix/overflow",
        "gitRepositoryUrl": "git@example.com:dev/ledger.git",
    }


def test_messages_by_role_and_content_items() -> None:
    cases = [
        ("user", Role.USER, [{"type": "input_text", "text": "fix it"}, {"type": "input_image", "image_url": "data:"}]),
        ("assistant", Role.ASSISTANT, [{"type": "output_text", "text": "Done."}, {"type": "refusal", "refusal": "no"}]),
        ("developer", Role.SYSTEM, [{"type": "input_text", "text": "rules"}]),
        ("system", Role.SYSTEM, [{"type": "input_text", "text": "rules"}, {"type": "future", "x": 1}, "odd"]),
    ]
    for native_role, role, content in cases:
        payload = {"type": "message", "role": native_role, "content": content}
        msg = map_response_item(payload, None)
        assert msg is not None and msg.role is role, native_role
        assert [json.loads(p.raw_json or "") for p in msg.parts] == content
        mapped = FORMAT.map_record(item(**payload))
        assert mapped.metadata["role"] == native_role and mapped.session_id is None
        # developer and system messages are Codex's own instructions: kept native only
        assert (mapped.message is None) == (native_role in ("developer", "system")), native_role
    user = FORMAT.map_record(item(type="message", role="user", content=cases[0][2])).message
    assert user is not None and user.content == "fix it\n[image]"
    assert [p.kind for p in user.parts] == [PartKind.TEXT, PartKind.IMAGE]
    odd = map_response_item({"type": "message", "role": "system", "content": cases[3][2]}, None)
    assert odd is not None and [p.kind for p in odd.parts] == [PartKind.TEXT, PartKind.OTHER, PartKind.OTHER]
    assert FORMAT.map_record(item(type="message", role="critic", content=[])).message is None


def test_scaffolding_kinds() -> None:
    """What Codex 0.171.0 writes around the conversation (see tests/formats/agent_written/)."""
    def text(role: str, value: str) -> dict[str, object]:
        return item(type="message", role=role, content=[{"type": "input_text", "text": value}])

    kinds = {
        "skills": (text("developer", "<skills_instructions>\n## Skills"), "agent_scaffolding"),
        "permissions": (text("developer", "<permissions instructions>\nsandbox"), "agent_scaffolding"),
        "environment": (text("user", "<environment_context>\n  <cwd>/p</cwd>"), "agent_scaffolding"),
        "agents.md": (text("user", "# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>"), "agent_scaffolding"),
        "lcm": (text("developer", "# Restored context (LCM)\nLCM keeps every message"), "lcm_context"),
        "prompt": (text("user", "run the echo command please"), None),
    }
    for name, (rec, kind) in kinds.items():
        mapped = FORMAT.map_record(rec)
        assert mapped.kind == kind, name
        assert (mapped.message is None) == (kind is not None), name


def test_function_call_and_output_pair_with_exit_code_errors() -> None:
    args = '{"command":["bash","-lc","cargo test"],"workdir":"/home/dev/ledger"}'
    wrapped = json.dumps({"output": "error[E0308]: mismatched types\n", "metadata": {"exit_code": 101}})
    records = [
        item(type="function_call", name="shell", arguments=args, call_id="call_A"),
        item(type="function_call_output", call_id="call_A", output=wrapped),
        item(
            type="custom_tool_call", status="completed", call_id="call_B", name="apply_patch", input="*** Begin Patch"
        ),
        item(
            type="custom_tool_call_output",
            call_id="call_B",
            output=json.dumps({"output": "Success.", "metadata": {"exit_code": 0}}),
        ),
        item(type="local_shell_call", call_id="call_C", status="completed", action={"type": "exec", "command": ["ls"]}),
        item(
            type="function_call_output", call_id="call_C", output="Exit code: 2\nWall time: 0.1 seconds\nOutput:\nls: x"
        ),
    ]
    msgs = messages(map_all(FORMAT, records))
    assert [m.role for m in msgs] == [Role.ASSISTANT, Role.TOOL] * 3
    assert unpaired_calls(msgs) == (set(), set())
    call = msgs[0].parts[0]
    assert (call.kind, call.tool_call_id, call.tool_name, call.text) == (PartKind.TOOL_CALL, "call_A", "shell", args)
    assert msgs[0].content == f"tool call shell: {args}"
    result = msgs[1].parts[0]
    assert (result.kind, result.text, result.is_error) == (
        PartKind.TOOL_RESULT,
        "error[E0308]: mismatched types\n",
        True,
    )
    assert msgs[1].content == "error[E0308]: mismatched types\n"
    assert (msgs[2].parts[0].tool_name, msgs[2].parts[0].text) == ("apply_patch", "*** Begin Patch")
    assert (msgs[3].parts[0].text, msgs[3].parts[0].is_error) == ("Success.", False)
    assert (msgs[4].parts[0].tool_name, msgs[4].parts[0].tool_call_id) == ("local_shell", "call_C")
    assert msgs[5].parts[0].is_error
    for record, msg in zip(records, msgs, strict=True):
        assert json.loads(msg.parts[0].raw_json or "") == record["payload"]


def test_tool_output_shapes() -> None:
    assert tool_output("plain") == ("plain", False)
    assert tool_output("{not json") == ("{not json", False)
    assert tool_output('{"output": 3}') == ('{"output": 3}', False)
    assert tool_output('{"output": "x", "metadata": {"exit_code": true}}') == ("x", False)
    assert tool_output({"content": "boom", "success": False}) == ("boom", True)
    assert tool_output([{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "u"}]) == (
        "a\n[image]",
        False,
    )
    assert tool_output(None) == ("", False)
    assert tool_output(12) == ("12", False)
    assert tool_output("Exit code: 0\nOutput:\nok") == ("Exit code: 0\nOutput:\nok", False)


def test_reasoning_and_web_search() -> None:
    reasoning = item(
        type="reasoning",
        summary=[{"type": "summary_text", "text": "**Reading balance.rs**"}],
        content=[{"type": "reasoning_text", "text": "u64 underflow"}],
        encrypted_content="gAAAAABfake",
    )
    msg = FORMAT.map_record(reasoning).message
    assert msg is not None and msg.role is Role.ASSISTANT and msg.content == "" and msg.token_count == 0
    assert (msg.parts[0].kind, msg.parts[0].text) == (PartKind.REASONING, "**Reading balance.rs**\nu64 underflow")
    encrypted_only = FORMAT.map_record(item(type="reasoning", summary=[], encrypted_content="x")).message
    assert encrypted_only is not None and encrypted_only.parts[0].text is None
    search = FORMAT.map_record(
        item(type="web_search_call", status="completed", action={"type": "search", "query": "u64 checked_sub"})
    )
    assert search.message is not None and search.message.content == "web search: u64 checked_sub"


def test_native_only_envelopes() -> None:
    native = [
        env("event_msg", {"type": "user_message", "message": "fix it", "kind": "plain"}),
        env("event_msg", {"type": "token_count", "info": None}),
        env("turn_context", {"cwd": "/home/dev/ledger", "model": "gpt-5-codex", "effort": "medium"}),
        env("compacted", {"message": "Summary of earlier work"}),
        env("brand_new", {"anything": True}),
        item(type="ghost_snapshot", ghost_commit={"id": "abc"}),
        item(type="compaction", encrypted_content="x"),
        item(type="other_future_item"),
        env("response_item", "not an object"),
    ]
    for record in native:
        mapped = FORMAT.map_record(record)
        assert mapped.message is None and mapped.session_id is None and mapped.cwd is None, record
        assert mapped.metadata["type"] == record["type"]
    turn = FORMAT.map_record(native[2]).metadata
    assert (turn["cwd"], turn["model"], turn["effort"]) == ("/home/dev/ledger", "gpt-5-codex", "medium")
    for odd in ([], {}, {"type": "session_meta"}, {"payload": {}}, "x", {"type": 1, "payload": {}}):
        assert FORMAT.map_record(odd).message is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
payloads = st.fixed_dictionaries(
    {
        "type": st.sampled_from(sorted(["message", "reasoning", "function_call", "function_call_output", "x"])),
        "role": json_values,
        "content": json_values,
        "output": json_values,
        "arguments": json_values,
        "action": json_values,
        "summary": json_values,
    }
)


@settings(max_examples=80, deadline=None)
@given(st.one_of(json_values, st.builds(item), payloads.map(lambda p: env("response_item", p))))
def test_map_record_never_raises(value: Any) -> None:
    mapped = FORMAT.map_record(value)
    if mapped.message is not None:
        assert all(p.raw_json is not None for p in mapped.message.parts)


def test_sniff() -> None:
    assert FORMAT.sniff([META, item(type="message", role="user", content=[])])
    claude = {"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": "x"}}
    for head in ([], [claude], [item(type="message")], [META, claude], [[META]], ["x"], [env("session_meta", "x")]):
        assert not FORMAT.sniff(head), head


def test_default_roots_respect_codex_home(tmp_path: Path) -> None:
    assert FORMAT.default_roots({"CODEX_HOME": str(tmp_path / "cx"), "HOME": "/nowhere"}) == [tmp_path / "cx"]
    assert FORMAT.default_roots({"HOME": str(tmp_path)}) == [tmp_path / ".codex"]


def test_discover_sessions_and_archived(tmp_path: Path) -> None:
    names = [
        "sessions/2025/10/14/rollout-2025-10-14T09-12-03-b.jsonl",
        "sessions/2025/09/30/rollout-2025-09-30T18-00-00-a.jsonl",
        "archived_sessions/rollout-2025-08-01T10-00-00-c.jsonl",
        "sessions/2025/10/14/notes.jsonl",
        "history.jsonl",
        "log/codex-tui.log",
    ]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    found = [p.relative_to(tmp_path).as_posix() for p in FORMAT.discover(tmp_path)]
    assert found == [names[2], names[1], names[0]]
    inside = [p.name for p in FORMAT.discover(tmp_path / "sessions")]
    assert inside == ["rollout-2025-09-30T18-00-00-a.jsonl", "rollout-2025-10-14T09-12-03-b.jsonl"]
    assert list(FORMAT.discover(tmp_path / "missing")) == []


def test_structural_samples_cover_every_mapped_payload_type() -> None:
    samples = FORMAT.structural_samples()
    payload_types = {s["payload"].get("type") for s in samples if s["type"] == "response_item"}
    assert payload_types == set(MAPPERS)
    assert {s["type"] for s in samples} == {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
    mapped = [FORMAT.map_record(s) for s in samples if s["type"] == "response_item"]
    assert all(m.message is not None or m.kind == "agent_scaffolding" for m in mapped)
