"""Claude Code 2.1.197 with LCM installed: a memory stored in one session (the model calls lcm_store) reaches
the model on a related prompt of a later session (UserPromptSubmit), and an unrelated prompt gets nothing."""

from __future__ import annotations

import json

from .fake_model import Mcp, Text
from .harness import User

FACT = "The orders API paginates with opaque base64 cursors named next_token"


def prompt_context(user: User) -> str:
    """What the UserPromptSubmit hook added to the first model request of the last run ("" when nothing)."""
    texts = [json.dumps(user.model.main_requests()[0].body)]
    found = [t for t in json.loads(f"[{texts[0]}]")[0].get("messages", [])]
    for message in found:
        content = message["content"]
        for part in content if isinstance(content, list) else [{"text": content}]:
            text = str(part.get("text", "")) if isinstance(part, dict) else ""
            if "UserPromptSubmit hook additional context" in text:
                return text
    return ""


def test_a_memory_of_an_earlier_session_reaches_a_later_prompt(user: User) -> None:
    user.lcm("install", "claude")
    first = user.claude("remember how the orders API paginates",
                        [Mcp("lcm_store", {"text": FACT, "tags": ["orders-api"]}), Text("remembered")])
    assert first["result"] == "remembered" and not user.model.errors, user.model.errors
    listed = json.loads(user.lcm("memory", "list", "--json").stdout)["memories"]
    assert [m["content"] for m in listed] == [FACT] and listed[0]["lineage"]["origin"] == "mcp"

    later = user.claude("how do I page through orders with next_token cursors?", [Text("use next_token")])
    assert later["result"] == "use next_token" and not user.model.errors, user.model.errors
    injected = prompt_context(user)  # each run logs its own requests
    assert FACT in injected and 'id="mem_1"' in injected  # the memory, with its id

    user.claude("write a haiku about autumn leaves", [Text("leaves fall")])
    assert prompt_context(user) == ""  # nothing relevant enough: nothing injected at the prompt
    stats = json.loads(user.lcm("memory", "stats", "--json").stdout)["memories"]
    assert stats[0]["surfaced"] >= 1


