"""Gemini CLI 0.61.0 with the contrib plugin installed, as a user runs it: install, a session with a shell call and
an ``lcm_store`` MCP call, the stored conversation equal to Gemini CLI's own transcript, the next session's
restored context, ``lcm_grep`` over MCP, the memory recalled for a related prompt, uninstall."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .fake_gemini import function_responses
from .fake_model import Mcp, Shell, Step, Text
from .harness import User, snapshot
from .transcripts import gemini_cli_items, stored_items

MARKER = "e2e-gemini-marker-3c8d"
FACT = "The billing service retries webhooks with exponential backoff capped at 30 minutes"
USER_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui": {"theme": "GitHub"},
                 "hooks": {"AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "true"}]}]}}


def gemini(user: User, prompt: str, steps: list[Step], *extra: str) -> dict[str, Any]:
    """``gemini -p`` (its JSON result), its Gemini API pointed at the fake model (``GOOGLE_GEMINI_BASE_URL``)."""
    user.model.run(steps)
    env = {"GOOGLE_GEMINI_BASE_URL": user.model.url, "GEMINI_API_KEY": "e2e-fake-key",
           "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true"}
    done = user._agent([str(user.agents.gemini), "-p", prompt, "--yolo", "--output-format", "json", *extra], env)
    return dict(json.loads(done.stdout))


def recording(user: User, session_id: str) -> Path:
    (path,) = user.home.glob(f".gemini/tmp/*/chats/session-*-{session_id[:8]}.jsonl")
    return path


def test_gemini_cli_end_to_end(user: User) -> None:
    settings = user.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    before = snapshot([settings])
    user.lcm("install", "gemini")
    doctor = json.loads(user.lcm("doctor", "--json", check=False).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "gemini_hooks")["status"] == "ok"

    # 1. a session with a shell call and an MCP call storing a memory; the hooks ingest it
    first = gemini(user, "run the echo command, then remember how billing retries",
                   [Shell(f"echo {MARKER}"), Mcp("lcm_store", {"text": FACT, "tags": ["billing"]}), Text("done both")])
    session = first["session_id"]
    assert first["response"] == "done both" and not user.model.errors, user.model.errors
    rows = user.wait_processed({"Stop"})
    assert all(err is None for _, _, err in rows), rows
    shell = user.shell_facts("echo")  # PostToolUse: the call's facts, its command kept (no token shape)
    assert shell and all(f["status"] == "ok" and f["kind"] == "shell" and "error" not in f for f in shell), shell
    assert any(f["command"] == f"echo {MARKER}" for f in shell), shell

    # 2. the stored conversation is Gemini CLI's own transcript, each turn once; a direct import stores the same
    stored = stored_items(user, session)
    assert stored == gemini_cli_items(recording(user, session))
    assert [i[0] for i in stored] == ["user", "call", "result", "call", "result", "text"]
    assert MARKER in stored[2][1]
    direct = user.root / "direct-lcm"
    user.lcm("import", str(recording(user, session)), "--project", str(user.project), lcm_home=direct)
    assert stored_items(user, session, direct) == stored
    listed = json.loads(user.lcm("memory", "list", "--json").stdout)["memories"]
    assert [m["content"] for m in listed] == [FACT]

    # 3. the next session: the restored context in its first request, lcm_grep over MCP
    second = gemini(user, "what did we echo before?", [Mcp("lcm_grep", {"pattern": MARKER}), Text("found it")])
    assert second["response"] == "found it" and not user.model.errors, user.model.errors
    requests = user.model.main_requests()
    opening = json.dumps(requests[0].body)
    assert "# Restored context (LCM)" in opening and MARKER in opening
    names = {d["name"] for t in requests[0].body["tools"] for d in t.get("functionDeclarations", [])}
    assert {"mcp_lcm_lcm_grep", "mcp_lcm_lcm_expand"} <= names
    assert any(MARKER in text and "msg_" in text for text in function_responses(requests[1].body))
    assert user.mcp_servers_left() == []
    user.wait_processed({"Stop"})
    stored = stored_items(user, second["session_id"])
    assert stored[0] == ("user", "what did we echo before?")  # LCM's own context is never imported back
    assert not any("Restored context" in i[1] for i in stored)

    # 4. a related prompt (resuming, so no restored context is prepended to it): BeforeAgent's recall has the memory
    third = gemini(user, "how does the billing service retry webhooks with backoff?", [Text("with backoff")],
                   "--resume", "latest")
    assert third["response"] == "with backoff" and not user.model.errors, user.model.errors
    recall = [p["text"] for c in user.model.main_requests()[0].body["contents"] for p in c["parts"]
              if p.get("text", "").startswith("<hook_context># Restored context (LCM): memory relevant")]
    assert len(recall) == 1 and FACT in recall[0] and 'id="mem_1"' in recall[0]

    # 4b. the same in a fresh session: Gemini CLI glues SessionStart's context to the prompt BeforeAgent sees;
    # recall reads the prompt without it, so the memory still surfaces
    fourth = gemini(user, "how does the billing service retry webhooks with backoff?", [Text("with backoff")])
    assert fourth["response"] == "with backoff" and not user.model.errors, user.model.errors
    texts = [p.get("text", "") for c in user.model.main_requests()[0].body["contents"] for p in c["parts"]]
    relevant = [t for t in texts if "# Restored context (LCM): memory relevant" in t]
    assert len(relevant) == 1 and FACT in relevant[0] and 'id="mem_1"' in relevant[0], texts

    # 5. uninstall: the user's settings byte for byte
    user.lcm("uninstall", "gemini")
    assert settings.read_bytes() == before[settings]
