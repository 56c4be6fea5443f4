"""Codex 0.171.0 with LCM installed, as a user runs it: install (hooks trusted), a session with a shell call,
hooks, the stored conversation, the next session's restored context and MCP tools, Codex's own config edits,
uninstall."""

from __future__ import annotations

import json
import re
import tomllib

from lcm_format_codex import trust as codex_trust

from .fake_model import Mcp, Shell, Text
from .harness import User, snapshot, tool_results

MARKER = "e2e-codex-marker-5b1c"
USER_CONFIG = '# my Codex settings\napproval_policy = "never"\n\n[history]\npersistence = "save-all"\n'
USER_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}}


def session_id(output: str) -> str:
    found = re.search(r"session id: ([0-9a-f-]{36})", output)
    assert found, output
    return found.group(1)


def test_codex_end_to_end(user: User) -> None:
    codex_home = user.home / ".codex"
    codex_home.mkdir()
    config, hooks = codex_home / "config.toml", codex_home / "hooks.json"
    config.write_text(USER_CONFIG)
    hooks.write_text(json.dumps(USER_HOOKS, indent=2) + "\n")
    before = snapshot([config, hooks])
    installed = user.lcm("install", "codex")
    assert "trusting LCM's hooks" in installed.stdout
    doctor = json.loads(user.lcm("doctor", "--json", check=False).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "codex_hooks")["status"] == "ok"

    # 1. a session with a shell tool call; Codex runs LCM's (trusted) hooks with no extra flag
    output = user.codex("run the echo command please", [Shell(f"echo {MARKER}"), Text("the echo printed it")])
    session = session_id(output)
    assert "hook: SessionStart Completed" in output and "hook: Stop Completed" in output, output
    assert not user.model.errors
    rows = user.wait_processed({"Stop"})
    assert all(err is None for _, _, err in rows), rows
    (transcript,) = codex_home.glob(f"sessions/*/*/*/rollout-*{session}.jsonl")

    # 2. the stored conversation is what a direct import gives, without Codex's scaffolding
    stored = user.turns(session)
    assert [role for role, _ in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[0][1] == "run the echo command please" and MARKER in stored[2][1]
    direct = user.root / "direct-lcm"
    user.lcm("import", str(transcript), "--project", str(user.project), lcm_home=direct)
    assert user.turns(session, direct) == stored

    # 3. the next session: LCM's context in its first request (never imported back), lcm_grep over MCP
    output = user.codex("what did we echo before?", [Mcp("lcm_grep", {"pattern": MARKER}), Text("found it")])
    second = session_id(output)
    assert not user.model.errors, user.model.errors
    requests = user.model.main_requests()
    opening = json.dumps(requests[0].body)
    assert "# Restored context (LCM)" in opening and MARKER in opening
    called = next(r for r in requests if isinstance(r.step, Mcp))
    lcm_tools = next(t for t in called.body["tools"] if t.get("name") == "mcp__lcm")
    assert {"lcm_grep", "lcm_expand"} <= {t["name"] for t in lcm_tools["tools"]}
    assert requests.index(called) == 0  # LCM's tools were there from the first request (a fast MCP start)
    assert user.mcp_servers_left() == []  # the agent stopped its MCP server when it exited
    answered = requests[requests.index(called) + 1]
    assert any(MARKER in text and "msg_" in text for text in tool_results(answered.body))
    user.wait_processed({"Stop"})
    assert [role for role, _ in user.turns(second)] == ["user", "assistant", "tool", "assistant"]
    assert not any("Restored context" in text for _, text in user.turns(second))

    # 4. Codex compacts a long session itself: PreCompact runs, and after the compaction the session's own
    #    context (what Codex's summary replaced) comes back through SessionStart
    user.model.input_tokens = 50_000
    compacting = "e2e-codex-compacted-9d2e"
    output = user.codex("check the compaction", [Shell(f"echo {compacting}"), Text("compacted fine")],
                        "-c", "model_auto_compact_token_limit=100", "-c", "model_context_window=1000")
    user.model.input_tokens = 50
    assert "hook: PreCompact Completed" in output and "context compacted" in output, output
    assert user.model.requests and not user.model.errors
    user.wait_processed({"PreCompact"})
    summarizing = next(i for i, r in enumerate(user.model.requests) if r.step is None and r.path.endswith("/responses"))
    after = json.dumps([r.body for r in user.model.requests[summarizing + 1:]])
    assert "# Restored context (LCM)" in after and compacting in after
    assert not any("Restored context" in text for _, text in user.turns(session_id(output)))

    # 5. Codex edits its config itself (its TOML editor appends the table), then uninstall
    user._agent([str(user.agents.codex), "mcp", "add", "added-later", "--", "/bin/true"])
    pre_uninstall = tomllib.loads(config.read_text())
    assert "added-later" in pre_uninstall["mcp_servers"]
    ours = {t.key for t in codex_trust.lcm_hooks(hooks, json.loads(hooks.read_text()))}
    user.lcm("uninstall", "codex")
    assert hooks.read_bytes() == before[hooks]
    after_text = config.read_text()
    after = tomllib.loads(after_text)
    expected = {**pre_uninstall, "mcp_servers": {k: v for k, v in pre_uninstall["mcp_servers"].items() if k != "lcm"}}
    state = {k: v for k, v in pre_uninstall.get("hooks", {}).get("state", {}).items() if k not in ours}
    if state:
        expected["hooks"] = {**pre_uninstall["hooks"], "state": state}
    else:
        expected.pop("hooks", None)
    assert after == expected
    assert after_text.startswith(USER_CONFIG) and after["mcp_servers"]["added-later"]["command"] == "/bin/true"
