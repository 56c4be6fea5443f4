"""Qwen Code 0.24.4 with the contrib plugin installed, as a user runs it: install, a session with a shell call and
an ``lcm_store`` MCP call, the stored conversation equal to Qwen Code's own transcript, the next session's
restored context and prompt-time recall, ``lcm_grep`` over MCP, uninstall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .fake_chat_completions import tool_results
from .fake_model import Mcp, Shell, Step, Text
from .harness import User, snapshot
from .transcripts import qwen_code_items, stored_items

MARKER = "e2e-qwen-marker-8a1f"
FACT = "The inventory service locks rows with SELECT FOR UPDATE SKIP LOCKED when reserving stock"
USER_SETTINGS = {"memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
                 "ui": {"theme": "GitHub"},
                 "hooks": {"PostToolUse": [{"matcher": "write_file",
                                            "hooks": [{"type": "command", "command": "true"}]}]},
                 "$version": 4}
"""A user's settings as Qwen Code 0.24 keeps them (it adds ``$version`` on its first run)."""


def qwen(user: User, prompt: str, steps: list[Step]) -> dict[str, Any]:
    """``qwen -p`` (its result event); its OpenAI-compatible provider is the fake model (``OPENAI_BASE_URL``)."""
    user.model.run(steps)
    env = {"OPENAI_BASE_URL": f"{user.model.url}/v1", "OPENAI_API_KEY": "sk-e2e-fake",
           "OPENAI_MODEL": "qwen3-coder-plus", "QWEN_CODE_NO_RELAUNCH": "true", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
    done = user._agent([str(user.agents.qwen), "-p", prompt, "--yolo", "--auth-type", "openai",
                        "--output-format", "json"], env)
    return dict(next(e for e in json.loads(done.stdout) if e.get("type") == "result"))


def recording(user: User, session_id: str) -> Path:
    (path,) = user.home.glob(f".qwen/projects/*/chats/{session_id}.jsonl")
    return path


def test_qwen_code_end_to_end(user: User) -> None:
    settings = user.home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    before = snapshot([settings])
    user.lcm("install", "qwen")
    doctor = json.loads(user.lcm("doctor", "--json", check=False).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "qwen_hooks")["status"] == "ok"

    # 1. a session with a shell call and an MCP call storing a memory; the hooks ingest it
    first = qwen(user, "run the echo command, then remember how stock is reserved",
                 [Shell(f"echo {MARKER}"), Mcp("lcm_store", {"text": FACT, "tags": ["inventory"]}), Text("done both")])
    session = first["session_id"]
    assert first["result"] == "done both" and not user.model.errors, user.model.errors
    rows = user.wait_processed({"Stop"})
    assert all(err is None for _, _, err in rows), rows
    shell = user.shell_facts("echo")  # PostToolUse: the call's facts, its command kept (no token shape)
    assert shell and all(f["status"] == "ok" and f["kind"] == "shell" and "error" not in f for f in shell), shell
    assert any(f["command"] == f"echo {MARKER}" for f in shell), shell

    # 2. the stored conversation is Qwen Code's own transcript; a direct import stores the same
    stored = stored_items(user, session)
    assert stored == qwen_code_items(recording(user, session))
    assert [i[0] for i in stored] == ["user", "call", "result", "call", "result", "text"]
    assert MARKER in stored[2][1]
    direct = user.root / "direct-lcm"
    user.lcm("import", str(recording(user, session)), "--project", str(user.project), lcm_home=direct)
    assert stored_items(user, session, direct) == stored
    listed = json.loads(user.lcm("memory", "list", "--json").stdout)["memories"]
    assert [m["content"] for m in listed] == [FACT]

    # 3. the next session: restored context and the prompt's recall in its first request, lcm_grep over MCP
    prompt = "how does the inventory service lock rows when reserving stock?"
    second = qwen(user, prompt, [Mcp("lcm_grep", {"pattern": MARKER}), Text("found it")])
    assert second["result"] == "found it" and not user.model.errors, user.model.errors
    requests = user.model.main_requests()
    opening = json.dumps(requests[0].body)
    assert "# Restored context (LCM)" in opening and MARKER in opening
    assert "# Restored context (LCM): memory relevant" in opening and FACT in opening
    names = {t["function"]["name"] for t in requests[0].body["tools"]}
    assert {"mcp__lcm__lcm_grep", "mcp__lcm__lcm_expand"} <= names  # alwaysLoadTools: no tool_search round trip
    assert any(MARKER in text and "msg_" in text for text in tool_results(requests[1].body))
    assert user.mcp_servers_left() == []
    user.wait_processed({"Stop"})
    stored = stored_items(user, second["session_id"])
    assert stored[0] == ("user", prompt)
    assert not any("Restored context" in i[1] for i in stored)  # LCM's own context is never imported back

    # 4. uninstall: the user's settings byte for byte
    user.lcm("uninstall", "qwen")
    assert settings.read_bytes() == before[settings]
