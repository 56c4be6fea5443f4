"""The contrib OpenCode plugin: its format on sessions OpenCode 1.18.33 wrote through LCM's plugin, ``lcm import``
of the default location, ``lcm install opencode`` / ``uninstall``, and the plugin file itself run by node the way
OpenCode runs it (its hooks and events called with OpenCode's shapes, ``lcm`` replaced by a recorder)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lcm_framework.storage.models import PartKind, Role
from lcm_framework.transcripts.contracts import CLIENT_AUTHORED, CLIENT_META, COMPACT_SUMMARY
from lcm_framework.transcripts.format_helpers import prompt_sha256
from tests.conftest import CLAUDE_SAMPLE, run_lcm, skip_or_fail
from tests.contrib import CONTRIB, install_target

from .helpers import read_jsonl, unpaired_calls

PACKAGE = CONTRIB / "lcm-format-opencode"
SAMPLES = sorted((PACKAGE / "samples").glob("ses_*.jsonl"))
ECHO = PACKAGE / "samples" / "ses_dcc1fd3cfffeuwAFriQkZzh3ub.jsonl"  # a shell call
GREP = PACKAGE / "samples" / "ses_dcc1f245cffe3YUcVhhwjxUz2p.jsonl"  # the next session: lcm_grep over MCP
PARENT, CHILD = "ses_dcc0c00e5ffeQOWVJ7pkRnIQSA", "ses_dcc0bd8feffethhQMydAZKeceJ"  # a `task` call and its session
USER_CONFIG: dict[str, Any] = {"$schema": "https://opencode.ai/config.json", "model": "fake/fake-model",
               "mcp": {"docs": {"type": "local", "command": ["npx", "-y", "docs-mcp"]}}}


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_opencode_format_under_test", PACKAGE / "lcm_format_opencode" /
                                                  "format.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORMAT: Any = _load().FORMAT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_target(tmp_path_factory.mktemp("contrib") / "site", "lcm-format-opencode")


def test_the_sessions_opencode_wrote_map_to_their_turns() -> None:
    for sample in SAMPLES:
        records = read_jsonl(sample)
        assert FORMAT.sniff(records[:3]) and not FORMAT.sniff(read_jsonl(CLAUDE_SAMPLE)[:3])
        mapped = [FORMAT.map_record(r) for r in records]
        assert (mapped[0].session_id, mapped[0].cwd) == (sample.stem, "/home/dev/demo")
        messages = [m.message for m in mapped if m.message]
        assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT, Role.ASSISTANT]
        assert unpaired_calls(messages) == (set(), set())
        kinds = [p.kind for p in messages[1].parts]
        assert kinds == [PartKind.OTHER, PartKind.TOOL_CALL, PartKind.TOOL_RESULT, PartKind.OTHER]  # step-start...
        for record, part in zip(records[2]["parts"], [p for p in messages[1].parts if p.raw_json], strict=False):
            assert json.loads(part.raw_json) == record  # OpenCode's part kept verbatim
    first = [FORMAT.map_record(r).message for r in read_jsonl(ECHO)]
    assert "oc-marker-77" in first[2].content  # the echo's output, in the call's result
    child = [FORMAT.map_record(r) for r in read_jsonl(PACKAGE / "samples" / f"{CHILD}.jsonl")]
    assert (child[0].spawned_by.parent_session_id, child[0].spawned_by.agent_id) == (PARENT, CHILD)
    parent = [FORMAT.map_record(r) for r in read_jsonl(PACKAGE / "samples" / f"{PARENT}.jsonl")]
    assert parent[0].spawned_by is None
    (task,) = [p for p in parent[2].message.parts if p.kind is PartKind.TOOL_CALL]
    assert FORMAT.spawn(task).prompt_sha256 == prompt_sha256(child[1].message.content)


def test_opencodes_auto_compaction_is_kept_out_of_the_conversation() -> None:
    """OpenCode 1.18.33 compacting on its own: the request (a ``compaction`` part), the summary
    (``summary: true``), then its synthetic request to continue."""
    (sample,) = (PACKAGE / "samples" / "compaction").glob("ses_*.jsonl")
    mapped = [FORMAT.map_record(r) for r in read_jsonl(sample)]
    assert [m.kind for m in mapped[3:5]] == [CLIENT_META, COMPACT_SUMMARY]
    assert mapped[3].message is None and mapped[4].message is None
    (text,) = mapped[5].message.parts
    assert mapped[5].message.role is Role.USER and text.metadata == CLIENT_AUTHORED  # the model read it
    assert mapped[6].message.role is Role.ASSISTANT and mapped[7].kind == CLIENT_META  # and it compacts again


def test_sub_agents_compaction_errors_and_synthetic_text() -> None:
    child = FORMAT.map_record({"type": "session", "info": {"id": "ses_child", "directory": "/p",
                                                           "parentID": "ses_parent", "time": {"created": 1}}})
    assert child.spawned_by.parent_session_id == "ses_parent" and child.spawned_by.agent_id == "ses_child"
    assert child.spawned_by.own_session
    message = {"type": "message", "info": {"id": "msg_1", "role": "assistant", "time": {"created": 1}}, "parts": [
        {"id": "prt_1", "type": "tool", "tool": "task", "callID": "c1",
         "state": {"status": "error", "input": {"prompt": "look around", "subagent_type": "explore"},
                   "error": "aborted"}},
        {"id": "prt_2", "type": "file", "mime": "image/png", "filename": "shot.png", "url": "file:///shot.png"}]}
    call, result, image = FORMAT.map_record(message).message.parts
    assert result.is_error and result.text == "aborted" and image.kind is PartKind.IMAGE
    spawn = FORMAT.spawn(call)
    assert spawn.prompt_sha256 == prompt_sha256("look around") and spawn.agent_type == "explore"
    synthetic = FORMAT.map_record({"type": "message", "info": {"id": "msg_2", "role": "user"}, "parts": [
        {"id": "prt_3", "type": "text", "text": "file contents", "synthetic": True}]})
    assert synthetic.message.parts[0].metadata == CLIENT_AUTHORED
    asked = FORMAT.map_record({"type": "message", "info": {"id": "msg_3", "role": "user"},
                               "parts": [{"id": "prt_4", "type": "compaction", "auto": True}]})
    summary = FORMAT.map_record({"type": "message", "info": {"id": "msg_4", "role": "assistant", "summary": True},
                                 "parts": [{"id": "prt_5", "type": "text", "text": "we did things"}]})
    assert (asked.kind, asked.message) == (CLIENT_META, None)
    assert (summary.kind, summary.message) == (COMPACT_SUMMARY, None)
    assert FORMAT.map_record({"type": "removed"}).message is None and FORMAT.map_record([1]).message is None
    assert FORMAT.default_roots({"XDG_DATA_HOME": "/d", "HOME": "/h"}) == [Path("/d/opencode/lcm-sessions")]
    assert FORMAT.default_roots({"HOME": "/h"}) == [Path("/h/.local/share/opencode/lcm-sessions")]


def test_lcm_import_finds_the_mirrors_and_quarantines_a_torn_line(site: Path, lcm_env: Path) -> None:
    mirrors = lcm_env.parent / ".local" / "share" / "opencode" / "lcm-sessions"
    mirrors.mkdir(parents=True)
    for sample in SAMPLES:
        shutil.copy(sample, mirrors / sample.name)
    with (mirrors / GREP.name).open("a") as fh:
        fh.write('{"type": "message", "info": {"id": "msg_torn"\n')
    project = lcm_env.parent / "demo"
    (project / ".git").mkdir(parents=True)
    done = run_lcm("import", "--provider", "opencode", "--project", str(project), "--json",
                   env={"PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files_by_status"] == {"imported": 4} and report["messages"] == 12
    assert sum(report["quarantined"].values()) == 1
    listed = run_lcm("--project", str(project), "sessions", env={"PYTHONPATH": str(site)}).stdout
    assert "3 sessions, 1 sub-agent runs" in listed and f"sub-agent run ...{CHILD}" in listed


def test_install_writes_lcms_plugin_and_mcp_server_and_uninstall_restores_the_bytes(site: Path,
                                                                                    lcm_env: Path) -> None:
    root = lcm_env.parent / ".config" / "opencode"
    root.mkdir(parents=True)
    config = root / "opencode.json"
    original = json.dumps(USER_CONFIG, indent=2) + "\n"
    config.write_text(original)
    env = {"PYTHONPATH": str(site)}

    dry = run_lcm("install", "opencode", "--dry-run", env=env)
    assert dry.returncode == 0 and "plugins/lcm.js (after)" in dry.stdout and '"mcp"' not in dry.stdout.split(
        "opencode.json (after)")[0]
    assert not (root / "plugins").exists() and config.read_text() == original

    assert run_lcm("install", "opencode", env=env).returncode == 0
    plugin = (root / "plugins" / "lcm.js").read_text()
    server = json.loads(config.read_text())["mcp"]["lcm"]
    assert server["type"] == "local" and server["command"][-1] == "mcp" and server["enabled"] is True
    assert f"const LCM = {json.dumps(server['command'][:-1])};" in plugin and "__LCM_ARGV__" not in plugin
    assert json.loads(config.read_text())["mcp"]["docs"] == USER_CONFIG["mcp"]["docs"]
    again = json.loads(run_lcm("install", "opencode", "--json", env=env).stdout)
    assert [f["changed"] for f in again["files"]] == [False, False]

    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["opencode_hooks"]["status"] == "ok", checks["opencode_hooks"]
    (root / "plugins" / "lcm.js").write_text(plugin.replace("const AGENT", "// edited\nconst AGENT"))
    checks = {c["name"]: c for c in json.loads(run_lcm("doctor", "--json", env=env).stdout)["checks"]}
    assert checks["opencode_hooks"]["status"] == "fail" and "not what this LCM writes" in checks["opencode_hooks"][
        "detail"]

    assert run_lcm("uninstall", "opencode", env=env).returncode == 0
    assert config.read_text() == original and not (root / "plugins").exists()


def test_a_plugin_file_of_that_name_that_is_not_lcms_is_left_alone(site: Path, lcm_env: Path) -> None:
    plugins = lcm_env.parent / ".config" / "opencode" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "lcm.js").write_text("export const Mine = async () => ({})\n")
    done = run_lcm("install", "opencode", env={"PYTHONPATH": str(site)})
    assert done.returncode == 0 and "is not LCM's: left unchanged" in done.stdout + done.stderr
    assert (plugins / "lcm.js").read_text() == "export const Mine = async () => ({})\n"
    assert run_lcm("uninstall", "opencode", env={"PYTHONPATH": str(site)}).returncode == 0
    assert (plugins / "lcm.js").read_text() == "export const Mine = async () => ({})\n"


# --- the plugin file, run by node as OpenCode runs it ------------------------------------------------------

RECORDER = """#!/bin/sh
# stands in for lcm: records "argv<TAB>stdin" and answers SessionStart / UserPromptSubmit like lcm hook does
printf '%s\\t%s\\n' "$*" "$(cat)" >> "$LCM_RECORD"
case "$2" in
  SessionStart) printf '{"hookSpecificOutput": {"additionalContext": "RESTORED"}}\\n' ;;
  UserPromptSubmit) printf '{"hookSpecificOutput": {"additionalContext": "RECALL"}}\\n' ;;
esac
"""

DRIVER = """
import { LcmPlugin } from %(plugin)s;
const session = %(session)s;
const earlier = %(earlier)s;
const client = { session: {
  get: async ({ path }) => ({ data: path.id === session.id ? session : undefined }),
  messages: async () => ({ data: earlier }),
} };
const hooks = await LcmPlugin({ client, directory: session.directory });
const user = { id: "msg_b1", sessionID: session.id, role: "user", time: { created: 3 } };
const parts = [{ id: "prt_b1", sessionID: session.id, messageID: "msg_b1", type: "text", text: "what next?" }];
await hooks["chat.message"]({ sessionID: session.id }, { message: user, parts });
const system = ["You are OpenCode."];
await hooks["experimental.chat.system.transform"]({ sessionID: session.id }, { system });
const reply = { id: "msg_b2", sessionID: session.id, role: "assistant", parentID: "msg_b1", time: { created: 4 } };
for (const event of [
  { type: "message.updated", properties: { info: user } },
  { type: "message.part.updated", properties: { part: parts[0] } },
  { type: "message.updated", properties: { info: reply } },
  { type: "message.part.updated", properties: { part: { id: "prt_b2", sessionID: session.id, messageID: "msg_b2",
                                                       type: "text", text: "draf" } } },
  { type: "message.part.updated", properties: { part: { id: "prt_b2", sessionID: session.id, messageID: "msg_b2",
                                                       type: "text", text: "done" } } },
  { type: "message.updated", properties: { info: { ...reply, time: { created: 4, completed: 5 } } } },
  { type: "session.idle", properties: { sessionID: session.id } },
]) await hooks.event({ event });
console.log(JSON.stringify(system));
"""


def test_the_plugin_mirrors_the_session_and_runs_lcms_hooks_as_opencode_calls_it(site: Path, lcm_env: Path,
                                                                                 tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        skip_or_fail("node is not installed (OpenCode runs LCM's plugin in its JavaScript runtime)")
        return
    assert run_lcm("install", "opencode", env={"PYTHONPATH": str(site)}).returncode == 0
    installed = (lcm_env.parent / ".config" / "opencode" / "plugins" / "lcm.js").read_text()
    recorder = tmp_path / "lcm"
    recorder.write_text(RECORDER)
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    plugin = tmp_path / "lcm.mjs"
    plugin.write_text(re.sub(r"^const LCM = .*;$", f"const LCM = {json.dumps([str(recorder)])};", installed,
                             count=1, flags=re.MULTILINE))
    records = read_jsonl(GREP)
    session, earlier = records[0]["info"], [{"info": r["info"], "parts": r["parts"]} for r in records[1:]]
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER % {"plugin": json.dumps(str(plugin)), "session": json.dumps(session),
                                "earlier": json.dumps(earlier)})
    data, record = tmp_path / "data", tmp_path / "record.tsv"
    env = {**os.environ, "XDG_DATA_HOME": str(data), "LCM_RECORD": str(record)}
    done = subprocess.run([node, str(driver)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["You are OpenCode.", "RESTORED", "RECALL"]  # both in the system prompt

    # the mirror: the session line, the earlier messages from the API, this turn's messages from the events
    mirror = read_jsonl(data / "opencode" / "lcm-sessions" / f"{session['id']}.jsonl")
    assert mirror[:4] == records
    assert [(r["info"]["id"], [p["text"] for p in r["parts"]]) for r in mirror[4:]] == [
        ("msg_b1", ["what next?"]), ("msg_b2", ["done"])]  # each finished message once, its last version
    deadline = time.monotonic() + 10  # Stop runs detached
    while record.read_text().count("\n") < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    calls = [line.split("\t", 1) for line in record.read_text().splitlines()]
    assert [argv for argv, _ in calls] == [f"hook {e} --agent opencode --protocol lcm_format_opencode.hooks" for e in
                                           ("SessionStart", "UserPromptSubmit", "Stop")]
    start, prompt, stop = (json.loads(payload) for _, payload in calls)
    path = str(data / "opencode" / "lcm-sessions" / f"{session['id']}.jsonl")
    assert start == {"hook_event_name": "SessionStart", "session_id": session["id"], "transcript_path": path,
                     "cwd": session["directory"], "source": "resume"}  # the session had messages already
    assert prompt["prompt"] == "what next?" and stop["transcript_path"] == path


TOOL_DRIVER = """
import { LcmPlugin } from %(plugin)s;
const client = { session: { get: async () => ({ data: undefined }), messages: async () => ({ data: [] }) } };
const hooks = await LcmPlugin({ client, directory: %(directory)s });
const bash = { tool: "bash", sessionID: "ses_tool", callID: "call_1" };
await hooks["tool.execute.before"](bash, { args: { command: "pytest tests/test_api.py", description: "tests" } });
await hooks["tool.execute.after"](bash, { title: "pytest", output: "E   ModuleNotFoundError " + "x".repeat(5000),
                                          metadata: { exit: 1, description: "tests" } });
const edit = { tool: "edit", sessionID: "ses_tool", callID: "call_2" };
await hooks["tool.execute.before"](edit, { args: { filePath: "/p/src/a.py", oldString: "SECRET", newString: "NEW" } });
await hooks["tool.execute.after"](edit, { title: "a.py", output: "SECRET NEW", metadata: { diff: "SECRET" } });
"""


def test_each_finished_tool_call_runs_lcms_post_tool_use_hook_with_its_facts_only(site: Path, lcm_env: Path,
                                                                                  tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        skip_or_fail("node is not installed (OpenCode runs LCM's plugin in its JavaScript runtime)")
        return
    assert run_lcm("install", "opencode", env={"PYTHONPATH": str(site)}).returncode == 0
    installed = (lcm_env.parent / ".config" / "opencode" / "plugins" / "lcm.js").read_text()
    recorder = tmp_path / "lcm"
    recorder.write_text(RECORDER)
    recorder.chmod(recorder.stat().st_mode | stat.S_IXUSR)
    plugin = tmp_path / "lcm.mjs"
    plugin.write_text(re.sub(r"^const LCM = .*;$", f"const LCM = {json.dumps([str(recorder)])};", installed,
                             count=1, flags=re.MULTILINE))
    driver = tmp_path / "tools.mjs"
    driver.write_text(TOOL_DRIVER % {"plugin": json.dumps(str(plugin)), "directory": json.dumps(str(tmp_path))})
    record = tmp_path / "record.tsv"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "LCM_RECORD": str(record)}
    done = subprocess.run([node, str(driver)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 10  # PostToolUse runs detached, like Stop
    while (not record.exists() or record.read_text().count("\n") < 2) and time.monotonic() < deadline:
        time.sleep(0.1)
    calls = sorted((line.split("\t", 1) for line in record.read_text().splitlines()), key=lambda c: c[1])
    assert {argv for argv, _ in calls} == {"hook PostToolUse --agent opencode --protocol lcm_format_opencode.hooks"}
    bash, edit = sorted((json.loads(payload) for _, payload in calls), key=lambda p: p["tool_name"])
    assert bash["tool_input"] == {"command": "pytest tests/test_api.py"} and bash["tool_response"]["exit_code"] == 1
    assert bash["tool_response"]["output"].startswith("E   ModuleNotFoundError")
    assert len(bash["tool_response"]["output"]) == 1200  # the start of a failed call's output only
    assert edit["tool_input"] == {"filePath": "/p/src/a.py"} and edit["tool_response"] == {}
    assert "SECRET" not in json.dumps(edit)  # an edit's text never leaves OpenCode
    assert bash["session_id"] == "ses_tool" and bash["cwd"] == str(tmp_path)
