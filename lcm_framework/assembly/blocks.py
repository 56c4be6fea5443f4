"""Messages rebuilt from their stored parts as Anthropic-style content blocks, then sanitized.

Assistant (and every other) content is always a list of blocks. Tool calls
become ``tool_use`` blocks in assistant turns (an input above the large-file
threshold becomes ``{"lcm_large_input": <reference>}``), tool results
``tool_result`` blocks in user turns. Reasoning blocks are not replayed (providers require
their own signatures); they stay in storage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..storage.models import Message, MessagePart, PartKind, Role

Block = dict[str, Any]
Turn = dict[str, Any]
TextFilter = Callable[[Message, str], str]


def _tool_input(part: MessagePart) -> Any:
    try:
        value = json.loads(part.text) if part.text else {}
    except ValueError:
        return {"input": part.text}
    return value if isinstance(value, dict) else {"input": value}


def _block(part: MessagePart, message: Message, text_filter: TextFilter) -> Block | None:
    if part.kind is PartKind.TOOL_CALL:
        shown = text_filter(message, part.text) if part.text else part.text
        tool_input = _tool_input(part) if shown == part.text else {"lcm_large_input": shown}
        return {"type": "tool_use", "id": part.tool_call_id or f"call_{part.part_id}",
                "name": part.tool_name or "unknown", "input": tool_input}
    if part.kind is PartKind.TOOL_RESULT:
        block: Block = {"type": "tool_result", "tool_use_id": part.tool_call_id or "",
                        "content": text_filter(message, part.text or "")}
        if part.is_error:
            block["is_error"] = True
        return block
    if part.kind is PartKind.REASONING or not part.text:
        return None
    return {"type": "text", "text": text_filter(message, part.text)}


def message_turns(message: Message, parts: Sequence[MessagePart], text_filter: TextFilter) -> list[Turn]:
    """One message as one or more turns: tool results always travel in a user turn."""
    base = "assistant" if message.role is Role.ASSISTANT else "user"
    blocks = [b for b in (_block(p, message, text_filter) for p in parts) if b is not None]
    if not parts and message.content:
        blocks = [{"type": "text", "text": text_filter(message, message.content)}]
    turns: list[Turn] = []
    for block in blocks:
        role = {"tool_use": "assistant", "tool_result": "user"}.get(block["type"], base)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].append(block)
        else:
            turns.append({"role": role, "content": [block]})
    return turns


def sanitize_tool_pairs(turns: list[Turn]) -> list[Turn]:
    """Keep tool_use/tool_result blocks only in matched pairs; drop empty turns.

    A tool_use never answered is dropped. A tool_result whose tool_use is not in the context (its call
    sits in an older range shown as a summary) becomes a text block, so its output is not lost.
    """
    used: set[str] = set()
    answered: set[str] = set()
    for turn in turns:
        for block in turn["content"]:
            if block["type"] == "tool_use":
                used.add(block["id"])
            elif block["type"] == "tool_result" and block["tool_use_id"] in used:
                answered.add(block["tool_use_id"])
    out: list[Turn] = []
    for turn in turns:
        kept = [
            b if b["type"] != "tool_result" or b["tool_use_id"] in answered else _orphan_text(b)
            for b in turn["content"]
            if b["type"] != "tool_use" or b["id"] in answered
        ]
        if kept:
            out.append({**turn, "content": kept})
    return out


def _orphan_text(block: Block) -> Block:
    return {"type": "text", "text": f"[tool result of {block['tool_use_id'] or 'an earlier call'}]\n{block['content']}"}


def turn_text(turn: Turn) -> str:
    """A turn as plain text (for the one-text-block output)."""
    pieces = []
    for block in turn["content"]:
        if block["type"] == "text":
            pieces.append(block["text"])
        elif block["type"] == "tool_use":
            pieces.append(f"[tool_use {block['name']} {block['id']}] {json.dumps(block['input'], ensure_ascii=False)}")
        elif block["type"] == "tool_result":
            pieces.append(f"[tool_result {block['tool_use_id']}]\n{block['content']}")
    return "\n".join(pieces)
