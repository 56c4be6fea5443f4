"""What a conversation holds, read two independent ways: from LCM's storage, and from an agent's own transcript
as the agent itself reconstructs it. Items are ``("user", text)``, ``("text", text)``, ``("call", name, args)``
and ``("result", output)``, in order; reasoning is left out."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.kernel.plugins import build_plugins
from lcm_framework.storage.models import PartKind, Role

from .harness import User

Item = tuple[str, ...]
LCM_HOOK_CONTEXT = re.compile(r"<hook_context># Restored context \(LCM\).*?</hook_context>(\n\n)?", re.DOTALL)


def args_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def stored_items(user: User, session_id: str, lcm_home: Path | None = None) -> list[Item]:
    """The session's stored messages as items (every part, in order)."""
    env = {**os.environ, **user.env(), "LCM_HOME": str(lcm_home or user.lcm_home)}
    app = App(load_config(project=user.project, env=env, plugins=build_plugins(env)), build_plugins())
    items: list[Item] = []
    try:
        with app.project(user.project) as storage:
            conversations = storage.conversations
            for conversation in conversations.find_conversations(session_id):
                messages = conversations.list_messages(conversation.conversation_id)
                parts = conversations.list_parts([m.message_id for m in messages])
                for message in messages:
                    for part in parts.get(message.message_id, []):
                        if part.kind is PartKind.TEXT:
                            items.append(("user" if message.role is Role.USER else "text", part.text or ""))
                        elif part.kind is PartKind.TOOL_CALL:
                            items.append(("call", part.tool_name or "", args_json(json.loads(part.text or "{}"))))
                        elif part.kind is PartKind.TOOL_RESULT:
                            items.append(("result", part.text or ""))
    finally:
        app.close()
    return items


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def gemini_cli_items(path: Path) -> list[Item]:
    """A Gemini CLI recording as ``loadConversationRecord`` (0.61) rebuilds it: the last version of each
    message id, ``$set.messages`` replacing the list, ``$rewindTo`` cutting it; then the turns the model saw
    (no notices, no session context, no restated function responses), LCM's own hook context taken out."""
    messages: dict[str, dict[str, Any]] = {}
    for record in _lines(path):
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            messages = {i: messages[i] for i in ids[:cut]}
        elif isinstance(record.get("$set"), dict) and isinstance(record["$set"].get("messages"), list):
            messages = {m["id"]: m for m in record["$set"]["messages"]}
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record
    items: list[Item] = []
    for message in messages.values():
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"text": content}] if content else []
        if message["type"] == "user":
            texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
            if texts and not texts[0].startswith("<session_context>"):
                items += [("user", t) for t in (LCM_HOOK_CONTEXT.sub("", t) for t in texts) if t]
        elif message["type"] == "gemini" and message.get("toolCalls"):
            for call in message["toolCalls"]:
                items.append(("call", call["name"], args_json(call["args"])))
                items += [("result", p["functionResponse"]["response"]["output"]) for p in call["result"]]
        elif message["type"] == "gemini":
            items += [("text", p["text"]) for p in parts if p.get("text") and not p.get("thought")]
    return items


def qwen_code_items(path: Path) -> list[Item]:
    """A Qwen Code recording as it resumes one: the ``parentUuid`` chain back from the last record, its user,
    assistant and tool-result records' parts in order."""
    records = _lines(path)
    by_uuid = {r["uuid"]: r for r in records}
    chain: list[dict[str, Any]] = []
    cursor: dict[str, Any] | None = records[-1]
    while cursor is not None:
        chain.append(cursor)
        cursor = by_uuid.get(cursor.get("parentUuid") or "")
    items: list[Item] = []
    for record in reversed(chain):
        kind = record["type"]
        for part in (record.get("message") or {}).get("parts") or []:
            if isinstance(part.get("text"), str) and not part.get("thought") and kind in ("user", "assistant"):
                items.append(("user" if kind == "user" else "text", part["text"]))
            elif "functionCall" in part:
                items.append(("call", part["functionCall"]["name"], args_json(part["functionCall"]["args"])))
            elif "functionResponse" in part:
                items.append(("result", part["functionResponse"]["response"]["output"]))
    return items
