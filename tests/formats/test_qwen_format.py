"""The contrib Qwen Code format: its mapping (loaded from the source file) on transcripts Qwen Code 0.24.4 wrote,
and the installed plugin found through its entry point, sniffed, imported and kept apart from the built-ins."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lcm_framework.storage.models import PartKind, Role
from tests.conftest import run_lcm

from .conftest import QWEN
from .helpers import read_jsonl, unpaired_calls

SAMPLES = QWEN / "samples" / "qwen-code-0.24.4"
SHELL = SAMPLES / "b7bda203-b300-4c28-a2b0-a4bca323fbb3.jsonl"
MCP = SAMPLES / "dc0e9284-dfd4-4d7c-b93c-0eddeca3ed6d.jsonl"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_qwen_format_under_test", QWEN / "lcm_format_qwen" / "format.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORMAT: Any = _load().FORMAT


def test_a_real_session_maps_to_its_turns() -> None:
    mapped = [FORMAT.map_record(r) for r in read_jsonl(SHELL)]
    messages = [m.message for m in mapped if m.message is not None]
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert messages[0].content == "run the echo command please"
    call, result = messages[1].parts[0], messages[2].parts[0]
    assert (call.kind, call.tool_name, json.loads(call.text or "")["command"]) == (
        PartKind.TOOL_CALL, "run_shell_command", "echo marker-2f7c")
    assert (result.kind, result.tool_call_id, result.is_error) == (PartKind.TOOL_RESULT, call.tool_call_id, False)
    assert "Output: marker-2f7c" in (result.text or "")
    assert unpaired_calls(messages) == (set(), set())
    assert {m.kind for m in mapped if m.message is None} == {"client_meta"}  # ui_telemetry, attribution_snapshot
    assert {m.session_id for m in mapped} == {"b7bda203-b300-4c28-a2b0-a4bca323fbb3"}
    assert {m.cwd for m in mapped} == {"/home/dev/demo"}


def test_turns_that_are_not_conversation() -> None:
    base = {"uuid": "u", "sessionId": "s", "type": "user", "provenance": "real_user"}
    lcm = {**base, "message": {"role": "user", "parts": [{"text": "# Restored context (LCM)\n..."}]}}
    assert (FORMAT.map_record(lcm).kind, FORMAT.map_record(lcm).message) == ("lcm_context", None)
    mixed = {**base, "message": {"role": "user", "parts": [{"text": "fix it"},
                                                           {"text": "# Restored context (LCM): memory relevant"}]}}
    message = FORMAT.map_record(mixed).message
    assert message is not None and [p.text for p in message.parts] == ["fix it"]
    compression = {**base, "type": "system", "subtype": "chat_compression", "systemPayload": {"info": {}}}
    assert FORMAT.map_record(compression).kind == "compact_summary"
    injected = {**base, "subtype": "notification", "message": {"role": "user", "parts": [{"text": "task done"}]}}
    note = FORMAT.map_record(injected).message
    assert note is not None and note.parts[0].metadata == '{"authored_by":"client"}'
    failed = {**base, "type": "tool_result", "toolCallResult": {"callId": "c", "status": "error"},
              "message": {"role": "user", "parts": [{"functionResponse": {"id": "c", "response": {"error": "boom"}}}]}}
    result = FORMAT.map_record(failed).message
    assert result is not None and result.role is Role.TOOL and result.parts[0].is_error
    thought = {**base, "type": "assistant", "message": {"role": "model", "parts": [{"text": "hm", "thought": True}]}}
    reasoning = FORMAT.map_record(thought).message
    assert reasoning is not None and reasoning.parts[0].kind is PartKind.REASONING and reasoning.content == ""


def test_sub_agent_runs(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-dev-demo"
    session = project / "chats" / "s1.jsonl"
    run = project / "subagents" / "s1" / "agent-a7.jsonl"
    run.parent.mkdir(parents=True)
    session.parent.mkdir(parents=True)
    session.write_text("{}\n")
    run.write_text("{}\n")
    run.with_name("agent-a7.meta.json").write_text(json.dumps({"agentType": "general-purpose", "toolUseId": "c9"}))
    assert FORMAT.companions(session) == [run]
    spawned = FORMAT.source_subagent(run)
    assert (spawned.parent_session_id, spawned.agent_id, spawned.agent_type, spawned.tool_call_id) == (
        "s1", "a7", "general-purpose", "c9")
    assert FORMAT.source_subagent(session) is None
    record = {"uuid": "r", "parentUuid": None, "sessionId": "s1", "type": "user", "provenance": "real_user",
              "agentId": "a7", "isSidechain": True, "message": {"role": "user", "parts": [{"text": "look"}]}}
    assert FORMAT.map_record(record).subagent.agent_id == "a7"
    assert sorted(p.name for p in FORMAT.discover(tmp_path / "projects")) == ["agent-a7.jsonl", "s1.jsonl"]


def test_builtin_formats_do_not_claim_qwen_files() -> None:
    """Qwen Code's records look like Claude Code's around Gemini API parts: only this plugin may claim them."""
    head = read_jsonl(SHELL)[:5]
    probe = "import io,json,sys; from lcm_framework.kernel.plugins import build_plugins; " + (
        "print(json.dumps(build_plugins(stderr=io.StringIO()).sniff_format(json.loads(sys.argv[1]))))")
    out = subprocess.run([sys.executable, "-c", probe, json.dumps(head)], capture_output=True, text=True,
                         timeout=120, check=True)
    assert json.loads(out.stdout) is None
    assert FORMAT.sniff(head)


def test_lcm_import_finds_qwen_sessions_in_the_default_location(qwen_site: Path, lcm_env: Path) -> None:
    chats = lcm_env.parent / ".qwen" / "projects" / "-home-dev-demo" / "chats"
    chats.mkdir(parents=True)
    for sample in (SHELL, MCP):
        (chats / sample.name).write_bytes(sample.read_bytes())
    result = run_lcm("import", "--json", "--provider", "qwen", env={"PYTHONPATH": str(qwen_site)})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["files"], report["messages"], report["quarantined"], report["errors"]) == (2, 8, {}, [])
    assert {f["format"] for f in report["file_list"]} == {"qwen-code/qwen-jsonl/v1"}
    assert {c["project_root"] for c in report["conversations"]} == {"/home/dev/demo"}
    found = run_lcm("--project", "/home/dev/demo", "grep", "--mode", "substring", "--json", "marker-2f7c")
    assert found.returncode == 0 and "Output: marker-2f7c" in found.stdout, found.stderr


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
record_like = st.fixed_dictionaries({
    "uuid": st.text(max_size=4), "sessionId": st.text(max_size=4), "provenance": st.text(max_size=4),
    "type": st.sampled_from(["user", "assistant", "tool_result", "system", "x"]),
    "subtype": json_values, "isSidechain": json_values, "toolCallResult": json_values,
    "message": json_values | st.fixed_dictionaries({"role": json_values, "parts": st.lists(json_values, max_size=4)}),
})


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.one_of(json_values, record_like))
def test_map_record_never_raises(value: Any) -> None:
    mapped = FORMAT.map_record(value)
    if mapped.message is not None:
        assert all(p.raw_json is not None for p in mapped.message.parts)
