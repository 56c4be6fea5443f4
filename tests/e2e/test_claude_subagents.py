"""Claude Code 2.1.197 delegating to a sub-agent (its ``Agent`` tool) with LCM installed: the real CLI writes
``<session>/subagents/agent-<id>.jsonl``, the hooks store the run as its own conversation linked to the call."""

from __future__ import annotations

import json
import os

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins

from .fake_model import Mcp, Text
from .harness import User

SENTENCE = "e2e-subagent-finding-5c2d: the parser retries twice"


def test_a_sub_agent_run_is_stored_linked_and_found(user: User) -> None:
    (user.home / ".claude").mkdir()
    user.lcm("install", "claude")
    settings = json.loads((user.home / ".claude/settings.json").read_text())
    assert "SubagentStop" in settings["hooks"]
    steps = [Mcp("Agent", {"description": "survey the parser", "prompt": "Survey the parser module",
                           "subagent_type": "general-purpose"}),
             Text(SENTENCE),  # the sub-agent's own turn
             Text("the survey is back")]
    done = user.claude("delegate the parser survey", steps, "--allowedTools", "Agent")
    assert done["result"] == "the survey is back" and not user.model.errors, user.model.errors
    session = done["session_id"]
    rows = user.wait_processed({"Stop", "SessionEnd"})
    assert all(err is None for _, _, err in rows), rows
    (run_file,) = (user.home / ".claude").glob(f"projects/*/{session}/subagents/agent-*.jsonl")
    agent_id = run_file.stem.removeprefix("agent-")
    parent = [json.loads(line) for line in run_file.parent.parent.with_suffix(".jsonl").read_text().splitlines()]
    calls = [b["id"] for r in parent if r.get("type") == "assistant" for b in r["message"]["content"]
             if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Agent"]

    env = {**os.environ, **user.env()}
    app = App(load_config(project=user.project, env=env, plugins=build_plugins(env)), build_plugins())
    try:
        with app.project(user.project) as st:
            (link,) = st.conversations.list_subagent_links()
            child = st.conversations.get_conversation(link.child_conversation_id)
            assert child is not None and child.session_id == f"{session}/agent-{agent_id}"
            assert (link.parent_session_id, link.agent_id) == (session, agent_id)
            assert calls and link.tool_call_id == calls[0]
            texts = [m.content for m in st.conversations.list_messages(child.conversation_id)]
            assert texts[0] == "Survey the parser module" and any(SENTENCE in t for t in texts), texts
    finally:
        app.close()
    found = user.lcm("grep", "--mode", "substring", SENTENCE, "--json")
    hits = [h for g in json.loads(found.stdout)["groups"] for h in g["hits"]]
    origins = [h["subagent"] for h in hits if h.get("subagent")]  # the parent's tool result quotes it too
    assert origins and all(o["tool_call_id"] == link.tool_call_id for o in origins)
