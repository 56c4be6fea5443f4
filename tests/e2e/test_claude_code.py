"""Claude Code 2.1.197 with LCM installed, as a user runs it: install, a session with a shell call, hooks, the
stored conversation, the next session's restored context and MCP tools, /compact, uninstall."""

from __future__ import annotations

import json

from .fake_model import Mcp, Shell, Text
from .harness import User, snapshot, tool_results

MARKER = "e2e-claude-marker-7f3a"
USER_SETTINGS = {"permissions": {"allow": ["Bash(ls:*)"]}, "env": {"GREETING": "héllo"},
                 "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}}
USER_STATE = {"mcpServers": {"memory": {"type": "stdio", "command": "/bin/true", "args": []}}}


def test_claude_code_end_to_end(user: User) -> None:
    claude_dir = user.home / ".claude"
    claude_dir.mkdir()
    settings, state = claude_dir / "settings.json", user.home / ".claude.json"
    settings.write_text(json.dumps(USER_SETTINGS, indent=2, ensure_ascii=False) + "\n")
    state.write_text(json.dumps(USER_STATE, indent=2))
    before = snapshot([settings, state])
    user.lcm("install", "claude")

    # 1. a session with a shell tool call; every hook fires
    first = user.claude("run the echo command please", [Shell(f"echo {MARKER}"), Text("the echo printed it")])
    session = first["session_id"]
    assert first["result"] == "the echo printed it" and not user.model.errors
    rows = user.wait_processed({"Stop", "SessionEnd"})
    assert all(err is None for _, _, err in rows), rows
    (transcript,) = claude_dir.glob(f"projects/*/{session}.jsonl")
    assert "SessionStart" in transcript.read_text()  # Claude records the hook's run (hook_success)

    # 2. the stored conversation is what a direct import of the transcript gives
    stored = user.turns(session)
    assert [role for role, _ in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[0][1] == "run the echo command please" and MARKER in stored[2][1]
    direct = user.root / "direct-lcm"
    user.lcm("import", str(transcript), "--project", str(user.project), lcm_home=direct)
    assert user.turns(session, direct) == stored

    # 3. the next session: its first request carries LCM's context, its tools LCM's; lcm_grep finds the marker
    second = user.claude("what did we echo before?", [Mcp("lcm_grep", {"pattern": MARKER}), Text("found it")])
    assert second["result"] == "found it" and not user.model.errors, user.model.errors
    requests = user.model.main_requests()
    opening = json.dumps(requests[0].body)
    assert "# Restored context (LCM)" in opening and MARKER in opening
    called = next(r for r in requests if isinstance(r.step, Mcp))
    assert {"mcp__lcm__lcm_grep", "mcp__lcm__lcm_expand"} <= {t["name"] for t in called.body["tools"]}
    assert requests.index(called) == 0  # LCM's tools were there from the first request (a fast MCP start)
    assert user.mcp_servers_left() == []  # the agent stopped its MCP server when it exited
    answered = requests[requests.index(called) + 1]
    hit = json.loads(tool_results(answered.body)[-1])
    assert any(MARKER in h["snippet"] for g in hit["groups"] for h in g["hits"]), hit

    # Claude Code's own MCP log: every `lcm mcp` stopped at its first SIGINT
    logs = [json.loads(line)["debug"] for f in user.home.glob(".cache/claude-cli-nodejs/*/mcp-logs-lcm/*.jsonl")
            for line in f.read_text().splitlines() if line.strip()]
    assert any("Sending SIGINT" in line for line in logs), logs
    assert not any("SIGINT failed" in line for line in logs), logs

    # 4. /compact runs PreCompact; the compaction records are not stored as messages
    user.claude("/compact", [Text("Summary: we echoed the marker.")], "--resume", session)
    user.wait_processed({"PreCompact"})
    assert not any("Conversation compacted" in text or "<command-name>" in text for _, text in user.turns(session))

    # 5. uninstall: the user's files are as before, plus what Claude itself changed meanwhile
    user._agent([str(user.agents.claude), "mcp", "add", "-s", "user", "added-later", "--", "/bin/true"])
    pre_uninstall = json.loads(state.read_text())
    user.lcm("uninstall", "claude")
    assert settings.read_bytes() == before[settings]
    after = json.loads(state.read_text())
    expected = {**pre_uninstall, "mcpServers": {k: v for k, v in pre_uninstall["mcpServers"].items() if k != "lcm"}}
    assert after == expected
    assert set(after["mcpServers"]) == {"memory", "added-later"}  # the user's server and the one Claude added
