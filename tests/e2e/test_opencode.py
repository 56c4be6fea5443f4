"""OpenCode 1.18.33 with the contrib plugin installed, as a user runs it with an OpenAI-compatible provider of
their own: install (LCM's OpenCode plugin and MCP server), a session with a shell call and an ``lcm_store`` MCP
call, the stored conversation equal to OpenCode's own database, the next session's restored context and the
memory recalled for its prompt (both in the system prompt), ``lcm_grep`` over MCP, uninstall."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .fake_chat_completions import tool_results
from .fake_model import Mcp, Shell, Step, Text
from .harness import User, snapshot
from .transcripts import Item, args_json, stored_items

MARKER = "e2e-opencode-marker-2d9b"
FACT = "The search indexer rebuilds the catalog shards every Sunday at 03:00 UTC"


def user_config(url: str) -> dict[str, object]:
    """The user's own ``opencode.json``: their provider (the fake model) and preferences."""
    return {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
                                  "options": {"baseURL": f"{url}/v1", "apiKey": "sk-e2e-fake"},
                                  "models": {"fake-model": {"name": "Fake Model", "tool_call": True}}}},
            "model": "fake/fake-model"}


def mirrors(user: User) -> set[Path]:
    return set((user.home / ".local" / "share" / "opencode" / "lcm-sessions").glob("ses_*.jsonl"))


def opencode(user: User, prompt: str, steps: list[Step]) -> Path:
    """``opencode run`` in a new session: the session's mirror (LCM's plugin writes it)."""
    user.model.run(steps)
    before = mirrors(user)
    user._agent([str(user.agents.opencode), "run", prompt],
                {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"})
    (mirror,) = mirrors(user) - before
    return mirror


def opencode_items(user: User, session: str) -> list[Item]:
    """The session as OpenCode's own database holds it: each message's text, tool calls and their results."""
    path = user.home / ".local" / "share" / "opencode" / "opencode.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT m.data, p.data FROM message m JOIN part p ON p.message_id = m.id "
                          "WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id", (session,)).fetchall()
    items: list[Item] = []
    for message, part in ((json.loads(m), json.loads(p)) for m, p in rows):
        if part["type"] == "text":
            items.append(("user" if message["role"] == "user" else "text", part["text"]))
        elif part["type"] == "tool":
            items += [("call", part["tool"], args_json(part["state"]["input"])), ("result", part["state"]["output"])]
    return items


def test_opencode_end_to_end(user: User) -> None:
    config = user.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(user_config(user.model.url), indent=2) + "\n")
    before = snapshot([config])
    user.lcm("install", "opencode")
    doctor = json.loads(user.lcm("doctor", "--json", check=False).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "opencode_hooks")["status"] == "ok"

    # 1. a session with a shell call and an MCP call storing a memory; the plugin mirrors it, Stop ingests it
    first = opencode(user, "run the echo command, then remember when the catalog is rebuilt",
                     [Shell(f"echo {MARKER}"), Mcp("lcm_store", {"text": FACT, "tags": ["search"]}), Text("done both")])
    session = first.stem
    assert not user.model.errors, user.model.errors
    rows = user.wait_processed({"SessionStart", "UserPromptSubmit", "Stop"})
    assert all(err is None for _, _, err in rows), rows
    shell = user.shell_facts("echo")  # PostToolUse: the call's facts, its command kept (no token shape)
    assert shell and all(f["status"] == "ok" and f["kind"] == "shell" and "error" not in f for f in shell), shell
    assert any(f["command"] == f"echo {MARKER}" for f in shell), shell

    # 2. the stored conversation is what OpenCode's database holds, each turn once; a direct import of the
    #    mirror stores the same
    stored = stored_items(user, session)
    assert stored == opencode_items(user, session)
    assert [i[0] for i in stored] == ["user", "call", "result", "call", "result", "text"]
    assert MARKER in stored[2][1]
    direct = user.root / "direct-lcm"
    user.lcm("import", str(first), "--project", str(user.project), lcm_home=direct)
    assert stored_items(user, session, direct) == stored
    listed = json.loads(user.lcm("memory", "list", "--json").stdout)["memories"]
    assert [m["content"] for m in listed] == [FACT]

    # 3. the next session: LCM's context and the prompt's recall in the system prompt, lcm_grep over MCP
    second = opencode(user, "how often is the catalog rebuilt by the search indexer?",
                      [Mcp("lcm_grep", {"pattern": MARKER}), Text("found it")])
    assert not user.model.errors, user.model.errors
    requests = user.model.main_requests()
    system = "\n".join(m["content"] for m in requests[0].body["messages"] if m["role"] == "system")
    assert "# Restored context (LCM)\n" in system and MARKER in system
    assert "# Restored context (LCM): memory relevant" in system and FACT in system
    names = {t["function"]["name"] for t in requests[0].body["tools"]}
    assert {"lcm_lcm_grep", "lcm_lcm_expand"} <= names, names
    assert any(MARKER in text and "msg_" in text for text in tool_results(requests[1].body))
    assert user.mcp_servers_left() == []
    user.wait_processed({"Stop"})
    stored = stored_items(user, second.stem)
    assert stored == opencode_items(user, second.stem)
    assert not any("Restored context" in i[1] for i in stored)  # never written into the session

    # 4. uninstall: the user's opencode.json byte for byte, LCM's plugin file gone
    user.lcm("uninstall", "opencode")
    assert config.read_bytes() == before[config]
    assert not (config.parent / "plugins").exists()
