"""GitHub Copilot CLI 1.0.102 with the contrib plugin installed, as a user runs it against an OpenAI-compatible
endpoint (its BYOK mode: no GitHub sign-in): install, a session with a shell call and an ``lcm_store`` MCP call,
the stored conversation equal to Copilot CLI's own event log, the next session's restored context, ``lcm_grep``
over MCP, the memory recalled for a related prompt, its own compaction (PreCompact), uninstall."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from .fake_chat_completions import tool_results
from .fake_model import Mcp, Shell, Step, Text
from .harness import User, snapshot
from .transcripts import Item, args_json, stored_items

MARKER = "e2e-copilot-marker-6a1f"
FACT = "The invoice exporter writes one CSV per tenant into the nightly bucket"
USER_MCP = {"mcpServers": {"docs": {"tools": ["*"], "type": "local", "command": "/bin/true", "args": []}}}


def copilot(user: User, prompt: str, steps: list[Step], **extra: str) -> str:
    """``copilot -p`` in a new session (its id), the model being the fake one (``COPILOT_PROVIDER_BASE_URL``)."""
    user.model.run(steps)
    session = str(uuid.uuid4())
    env = {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{user.model.url}/v1",
           "COPILOT_PROVIDER_API_KEY": "sk-e2e-fake", "COPILOT_MODEL": "gpt-4.1", "COPILOT_AUTO_UPDATE": "false",
           **extra}
    user._agent([str(user.agents.copilot), "-p", prompt, "--allow-all-tools", "--session-id", session], env)
    return session


def events(user: User, session: str) -> Path:
    return user.home / ".copilot" / "session-state" / session / "events.jsonl"


def copilot_items(path: Path) -> list[Item]:
    """The main agent's conversation in Copilot CLI's event log: what was typed, the answers, the tool calls
    (``toolRequests``) and their results."""
    items: list[Item] = []
    for line in path.read_text().splitlines():
        record: dict[str, Any] = json.loads(line)
        data = record["data"]
        if record.get("agentId"):
            continue
        if record["type"] == "user.message":
            items.append(("user", data["content"]))
        elif record["type"] == "assistant.message":
            items += [("text", data["content"])] if data["content"] else []
            items += [("call", r["name"], args_json(r["arguments"])) for r in data.get("toolRequests", [])]
        elif record["type"] == "tool.execution_complete":
            items.append(("result", data["result"]["content"]))
    return items


def settled(user: User, session: str, timeout: float = 15) -> list[Item]:
    """The session as stored once it equals Copilot CLI's own event log (or the last one read at ``timeout``):
    Copilot CLI flushes the log's last records after its Stop hook has run, and the daemon's settling ingest
    stores them a moment later."""
    deadline = time.monotonic() + timeout
    while True:
        stored = stored_items(user, session)
        if stored == copilot_items(events(user, session)) or time.monotonic() > deadline:
            return stored
        time.sleep(0.3)


def test_copilot_cli_end_to_end(user: User) -> None:
    copilot_home = user.home / ".copilot"
    copilot_home.mkdir()
    mcp_config = copilot_home / "mcp-config.json"
    mcp_config.write_text(json.dumps(USER_MCP, indent=2) + "\n")
    before = snapshot([mcp_config])
    user.lcm("install", "copilot")
    doctor = json.loads(user.lcm("doctor", "--json", check=False).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "copilot_hooks")["status"] == "ok"

    # 1. a session with a shell call and an MCP call storing a memory; Stop ingests it
    first = copilot(user, "run the echo command, then remember where invoices go",
                    [Shell(f"echo {MARKER}"), Mcp("lcm_store", {"text": FACT, "tags": ["billing"]}), Text("done both")])
    assert not user.model.errors, user.model.errors
    rows = user.wait_processed({"SessionStart", "UserPromptSubmit", "Stop"})
    assert all(err is None for _, _, err in rows), rows
    shell = user.shell_facts("echo")  # PostToolUse: the call's facts, its command kept (no token shape)
    assert shell and all(f["status"] == "ok" and f["kind"] == "shell" and "error" not in f for f in shell), shell
    assert any(f["command"] == f"echo {MARKER}" for f in shell), shell

    # 2. the stored conversation is Copilot CLI's own event log, each turn once; a direct import stores the same
    stored = settled(user, first)
    assert stored == copilot_items(events(user, first))
    assert [i[0] for i in stored] == ["user", "call", "result", "call", "result", "text"]
    assert MARKER in stored[2][1]
    direct = user.root / "direct-lcm"
    user.lcm("import", str(events(user, first)), "--project", str(user.project), lcm_home=direct)
    assert stored_items(user, first, direct) == stored
    listed = json.loads(user.lcm("memory", "list", "--json").stdout)["memories"]
    assert [m["content"] for m in listed] == [FACT]

    # 3. the next session: the restored context before its prompt, the memory recalled into a related prompt,
    #    lcm_grep over MCP
    second = copilot(user, "which bucket does the invoice exporter write CSV files into?",
                     [Mcp("lcm_grep", {"pattern": MARKER}), Text("found it")])
    assert not user.model.errors, user.model.errors
    requests = user.model.main_requests()
    messages = requests[0].body["messages"]
    restored = [m["content"] for m in messages if m["role"] == "user"
                and m["content"].startswith("# Restored context (LCM)\n")]
    assert len(restored) == 1 and MARKER in restored[0]  # a message of its own, before the prompt
    prompt = next(m["content"] for m in messages if m["role"] == "user" and "which bucket" in m["content"])
    assert "<system_reminder>" in prompt and FACT in prompt.split("<system_reminder>", 1)[1]
    names = {t["function"]["name"] for t in requests[0].body["tools"]}
    assert any(n.endswith("lcm_grep") for n in names) and any(n.endswith("lcm_expand") for n in names), names
    assert any(MARKER in text and "msg_" in text for text in tool_results(requests[1].body))
    assert user.mcp_servers_left() == []
    user.wait_processed({"Stop"})
    stored = settled(user, second)
    assert stored == copilot_items(events(user, second))
    assert stored[0] == ("user", "which bucket does the invoice exporter write CSV files into?")
    assert not any("Restored context" in i[1] for i in stored)  # LCM's context is never imported back

    # 4. Copilot CLI compacts a long session itself: PreCompact ingests first, its summary is kept out of the
    #    conversation (a native record of kind compact_summary)
    user.model.input_tokens = 60_000
    third = copilot(user, "check the compaction", [Shell("echo compacting-1"), Shell("echo compacting-2"),
                                                   Text("compacted")], COPILOT_PROVIDER_MAX_PROMPT_TOKENS="64000")
    user.model.input_tokens = 50
    log = events(user, third).read_text()
    assert '"type":"session.compaction_complete"' in log.replace(" ", ""), "Copilot CLI did not compact"
    rows = user.wait_processed({"PreCompact"})
    assert all(err is None for _, _, err in rows), rows
    assert settled(user, third) == copilot_items(events(user, third))

    # 5. uninstall: the user's MCP servers byte for byte, LCM's hooks file gone
    user.lcm("uninstall", "copilot")
    assert mcp_config.read_bytes() == before[mcp_config]
    assert not (copilot_home / "hooks").exists()
