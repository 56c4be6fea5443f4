"""Claude (Anthropic Messages API) content blocks -> message parts and plain text.

Every block becomes exactly one part whose ``raw_json`` is the block verbatim,
so nothing is dropped; ``text`` is what the block contributes to the
message's plain-text ``content`` (``None`` when it contributes nothing).
"""

from __future__ import annotations

from typing import Any

from lcm_framework.plugin_api.formats import NewPart, PartKind, to_json

IMAGE_PLACEHOLDER = "[image]"
MappedBlock = tuple[NewPart, str | None]
"""A block's part and what it contributes to the plain text."""


def nested_text(content: Any) -> str:
    """Text of a tool result's ``content``: a string, or a list of text/image blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for item in content:
            if isinstance(item, str):
                pieces.append(item)
            elif isinstance(item, dict):
                if isinstance(item.get("text"), str):
                    pieces.append(item["text"])
                elif item.get("type") == "image":
                    pieces.append(IMAGE_PLACEHOLDER)
        return "\n".join(pieces)
    return "" if content is None else to_json(content)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def map_block(block: Any) -> MappedBlock:
    """One content block (any JSON value) -> its part and its contribution to the plain text."""
    raw = to_json(block)
    if not isinstance(block, dict):
        if isinstance(block, str):
            return NewPart(PartKind.TEXT, block, raw_json=raw), block
        return NewPart(PartKind.OTHER, raw_json=raw), None
    kind = block.get("type")
    kind = kind if isinstance(kind, str) else ""
    if kind == "text":
        text = _str(block.get("text")) or ""
        return NewPart(PartKind.TEXT, text, raw_json=raw), text
    if kind.endswith("tool_use"):  # tool_use, server_tool_use, mcp_tool_use
        name = _str(block.get("name"))
        arguments = to_json(block.get("input", {}))
        part = NewPart(PartKind.TOOL_CALL, arguments, _str(block.get("id")), name, raw_json=raw)
        return part, f"tool call {name or '?'}: {arguments}"
    if kind.endswith("tool_result"):  # tool_result, web_search_tool_result, mcp_tool_result...
        text = nested_text(block.get("content"))
        part = NewPart(PartKind.TOOL_RESULT, text, _str(block.get("tool_use_id")),
                       is_error=block.get("is_error") is True, raw_json=raw)
        return part, text
    if kind == "thinking":
        return NewPart(PartKind.REASONING, _str(block.get("thinking")), raw_json=raw), None
    if kind == "redacted_thinking":
        return NewPart(PartKind.REASONING, raw_json=raw), None
    if kind == "image":
        return NewPart(PartKind.IMAGE, raw_json=raw), IMAGE_PLACEHOLDER
    if kind == "document":
        title = _str(block.get("title"))
        return NewPart(PartKind.FILE, title, raw_json=raw), f"[document {title}]" if title else "[document]"
    return NewPart(PartKind.OTHER, _str(block.get("text")), raw_json=raw), None


def map_content(content: Any) -> tuple[list[NewPart], str]:
    """A message's ``content`` (string or block list) -> parts and plain text (pieces joined by newlines)."""
    if not isinstance(content, list):
        if content is None:
            return [], ""
        part, text = map_block(content)
        return [part], text or ""
    parts = []
    texts = []
    for block in content:
        part, text = map_block(block)
        parts.append(part)
        if text:
            texts.append(text)
    return parts, "\n".join(texts)
