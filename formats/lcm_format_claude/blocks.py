"""Claude (Anthropic Messages API) content blocks -> message parts and plain text.

Every block becomes exactly one part whose ``raw_json`` is the block verbatim,
so nothing is dropped; ``text`` is what the block contributes to the
message's plain-text ``content`` (``None`` when it contributes nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lcm_framework.plugin_api.formats import NewPart, PartKind, to_json

IMAGE_PLACEHOLDER = "[image]"


@dataclass(frozen=True, slots=True)
class MappedBlock:
    part: NewPart
    text: str | None


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
    if isinstance(block, str):
        return MappedBlock(NewPart(PartKind.TEXT, text=block, raw_json=raw), block)
    if not isinstance(block, dict):
        return MappedBlock(NewPart(PartKind.OTHER, raw_json=raw), None)
    kind = block.get("type")
    kind = kind if isinstance(kind, str) else ""
    if kind == "text":
        text = _str(block.get("text")) or ""
        return MappedBlock(NewPart(PartKind.TEXT, text=text, raw_json=raw), text)
    if kind.endswith("tool_use"):  # tool_use, server_tool_use, mcp_tool_use
        name = _str(block.get("name"))
        arguments = to_json(block.get("input", {}))
        part = NewPart(
            PartKind.TOOL_CALL, text=arguments, tool_call_id=_str(block.get("id")), tool_name=name, raw_json=raw
        )
        return MappedBlock(part, f"tool call {name or '?'}: {arguments}")
    if kind.endswith("tool_result"):  # tool_result, web_search_tool_result, mcp_tool_result...
        text = nested_text(block.get("content"))
        part = NewPart(
            PartKind.TOOL_RESULT,
            text=text,
            tool_call_id=_str(block.get("tool_use_id")),
            is_error=block.get("is_error") is True,
            raw_json=raw,
        )
        return MappedBlock(part, text)
    if kind == "thinking":
        return MappedBlock(NewPart(PartKind.REASONING, text=_str(block.get("thinking")), raw_json=raw), None)
    if kind == "redacted_thinking":
        return MappedBlock(NewPart(PartKind.REASONING, raw_json=raw), None)
    if kind == "image":
        return MappedBlock(NewPart(PartKind.IMAGE, raw_json=raw), IMAGE_PLACEHOLDER)
    if kind == "document":
        title = _str(block.get("title"))
        return MappedBlock(
            NewPart(PartKind.FILE, text=title, raw_json=raw), f"[document {title}]" if title else "[document]"
        )
    return MappedBlock(NewPart(PartKind.OTHER, text=_str(block.get("text")), raw_json=raw), None)


def map_content(content: Any) -> tuple[list[NewPart], str]:
    """A message's ``content`` (string or block list) -> parts and plain text (pieces joined by newlines)."""
    blocks: Sequence[Any] = content if isinstance(content, list) else [content]
    if content is None:
        blocks = []
    mapped = [map_block(block) for block in blocks]
    text = "\n".join(m.text for m in mapped if m.text)
    return [m.part for m in mapped], text
