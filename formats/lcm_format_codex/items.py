"""Codex ``response_item`` payloads -> messages (role, parts, plain text).

A ``message`` payload gives one part per content item; every other mapped
payload (reasoning, tool calls, tool outputs) is itself the block and gives
one part whose ``raw_json`` is the whole payload. Tool outputs are unwrapped
from Codex's ``{"output": ..., "metadata": {"exit_code": N}}`` string and a
non-zero exit code (or ``success: false``) flags the result as an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from lcm_framework.plugin_api.formats import NewMessage, NewPart, PartKind, Role, to_json
from lcm_framework.plugin_api.summarize import estimate_tokens

IMAGE_PLACEHOLDER = "[image]"
MESSAGE_ROLES = {
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "developer": Role.SYSTEM,
    "system": Role.SYSTEM,
}
_EXIT_CODE_LINE = re.compile(r"\AExit code: (-?\d+)\b")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _content_item(item: Any) -> tuple[NewPart, str | None]:
    raw = to_json(item)
    if not isinstance(item, dict):
        return NewPart(PartKind.OTHER, raw_json=raw), None
    kind = item.get("type")
    if kind in {"input_text", "output_text", "text"}:
        text = _str(item.get("text")) or ""
        return NewPart(PartKind.TEXT, text=text, raw_json=raw), text
    if kind == "refusal":
        text = _str(item.get("refusal")) or ""
        return NewPart(PartKind.TEXT, text=text, raw_json=raw), text
    if kind == "input_image":
        return NewPart(PartKind.IMAGE, raw_json=raw), IMAGE_PLACEHOLDER
    if kind == "input_file":
        name = _str(item.get("filename"))
        return NewPart(PartKind.FILE, text=name, raw_json=raw), f"[file {name}]" if name else "[file]"
    return NewPart(PartKind.OTHER, raw_json=raw), None


def _items_text(items: list[Any]) -> str:
    texts = (_content_item(item)[1] for item in items)
    return "\n".join(t for t in texts if t)


def tool_output(output: Any) -> tuple[str, bool]:
    """Text and error flag of a ``function_call_output``/``custom_tool_call_output`` ``output``."""
    if isinstance(output, list):
        return _items_text(output), False
    if isinstance(output, dict):
        text = _str(output.get("content")) or _str(output.get("output")) or ""
        return text, output.get("success") is False
    if not isinstance(output, str):
        return ("" if output is None else to_json(output)), False
    if output.startswith("{"):
        try:
            wrapped = json.loads(output)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            meta = wrapped.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            return wrapped["output"], isinstance(code, int) and not isinstance(code, bool) and code != 0
    match = _EXIT_CODE_LINE.match(output)
    return output, match is not None and int(match.group(1)) != 0


def _message(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str] | None:
    native_role = payload.get("role")
    role = MESSAGE_ROLES.get(native_role) if isinstance(native_role, str) else None
    content = payload.get("content")
    if role is None:
        return None
    items = content if isinstance(content, list) else [] if content is None else [content]
    mapped = [_content_item(item) for item in items]
    return role, [part for part, _ in mapped], "\n".join(text for _, text in mapped if text)


def _reasoning(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str]:
    texts = [
        entry["text"]
        for key in ("summary", "content")
        if isinstance(payload.get(key), list)
        for entry in payload[key]
        if isinstance(entry, dict) and isinstance(entry.get("text"), str)
    ]
    part = NewPart(PartKind.REASONING, text="\n".join(texts) or None, raw_json=to_json(payload))
    return Role.ASSISTANT, [part], ""


def _call(
    name: str | None, call_id: str | None, arguments: str, payload: dict[str, Any]
) -> tuple[Role, list[NewPart], str]:
    part = NewPart(PartKind.TOOL_CALL, text=arguments, tool_call_id=call_id, tool_name=name, raw_json=to_json(payload))
    return Role.ASSISTANT, [part], f"tool call {name or '?'}: {arguments}"


def _function_call(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str]:
    arguments = payload.get("arguments")
    text = arguments if isinstance(arguments, str) else to_json(arguments)
    return _call(_str(payload.get("name")), _str(payload.get("call_id")), text, payload)


def _custom_tool_call(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str]:
    return _call(_str(payload.get("name")), _str(payload.get("call_id")), _str(payload.get("input")) or "", payload)


def _local_shell_call(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str]:
    call_id = _str(payload.get("call_id")) or _str(payload.get("id"))
    return _call("local_shell", call_id, to_json(payload.get("action")), payload)


def _tool_output(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str]:
    text, is_error = tool_output(payload.get("output"))
    part = NewPart(
        PartKind.TOOL_RESULT,
        text=text,
        tool_call_id=_str(payload.get("call_id")),
        is_error=is_error,
        raw_json=to_json(payload),
    )
    return Role.TOOL, [part], text


def _web_search_call(payload: dict[str, Any]) -> tuple[Role, list[NewPart], str]:
    action = payload.get("action")
    query = (_str(action.get("query")) or _str(action.get("url"))) if isinstance(action, dict) else None
    text = f"web search: {query}" if query else "web search"
    return Role.ASSISTANT, [NewPart(PartKind.OTHER, text=query, raw_json=to_json(payload))], text


MAPPERS: dict[str, Callable[[dict[str, Any]], tuple[Role, list[NewPart], str] | None]] = {
    "message": _message,
    "reasoning": _reasoning,
    "function_call": _function_call,
    "custom_tool_call": _custom_tool_call,
    "local_shell_call": _local_shell_call,
    "function_call_output": _tool_output,
    "custom_tool_call_output": _tool_output,
    "web_search_call": _web_search_call,
}


def map_response_item(payload: dict[str, Any], created_at: datetime | None) -> NewMessage | None:
    """The message a ``response_item`` payload stands for, or None (ghost snapshots, compaction, unknown)."""
    kind = payload.get("type")
    mapper = MAPPERS.get(kind) if isinstance(kind, str) else None
    mapped = mapper(payload) if mapper else None
    if mapped is None:
        return None
    role, parts, text = mapped
    return NewMessage(role=role, content=text, token_count=estimate_tokens(text), created_at=created_at, parts=parts)
