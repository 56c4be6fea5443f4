"""The ``gemini-cli/gemini-jsonl/v1`` transcript format.

Gemini CLI (0.40 and later) appends its chat recording to
``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``
(``GEMINI_CLI_HOME`` defaults to the home directory). Four kinds of line:

* the session header ``{"sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories"?}``;
* message records ``{"id", "timestamp", "type": "user"|"gemini"|"info"|"warning"|"error", "content", ...}``
  where ``content`` is a string or a list of Gemini API parts, and ``gemini`` records add ``thoughts``,
  ``toolCalls`` (each with its ``result``), ``tokens`` and ``model``;
* metadata updates ``{"$set": {...}}``;
* rewinds ``{"$rewindTo": "<message id>"}``.

Gemini CLI re-appends a message (same ``id``) whenever it changes (tool calls
finished, token counts arrived). Mapping is per record, so every written
version becomes a message; ``metadata["id"]`` names the message a version
belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.formats import (
    FormatIdentity,
    MappedRecord,
    NewMessage,
    NewPart,
    PartKind,
    Role,
    estimate_tokens,
    parse_timestamp,
    string_fields,
    to_json,
)

IDENTITY = FormatIdentity("gemini-cli", "gemini-jsonl", "v1")
ROLES = {"user": Role.USER, "gemini": Role.ASSISTANT, "info": Role.SYSTEM, "warning": Role.SYSTEM, "error": Role.SYSTEM}
MESSAGE_FIELDS = {"id": "id", "type": "type", "model": "model"}
HEADER_FIELDS = {"projectHash": "projectHash", "startTime": "startTime", "kind": "kind"}
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _parts(content: Any) -> list[Any]:
    if content is None:
        return []
    return content if isinstance(content, list) else [content]


def _response_text(response: Any) -> tuple[str, bool]:
    """Text of a function response and whether it failed (an ``error``, or a shell ``Exit Code`` other than 0)."""
    if isinstance(response, dict):
        if isinstance(response.get("error"), str):
            return response["error"], True
        if isinstance(response.get("output"), str):
            exit_code = _EXIT_CODE.search(response["output"])
            return response["output"], exit_code is not None and exit_code.group(1) != "0"
    return to_json(response), False


def map_part(part: Any) -> tuple[NewPart, str | None]:
    """One Gemini API part (or bare string) -> a message part and its contribution to the plain text."""
    raw = to_json(part)
    if isinstance(part, str):
        return NewPart(PartKind.TEXT, text=part, raw_json=raw), part
    if not isinstance(part, dict):
        return NewPart(PartKind.OTHER, raw_json=raw), None
    if isinstance(part.get("text"), str):
        if part.get("thought") is True:
            return NewPart(PartKind.REASONING, text=part["text"], raw_json=raw), None
        return NewPart(PartKind.TEXT, text=part["text"], raw_json=raw), part["text"]
    call = part.get("functionCall")
    if isinstance(call, dict):
        name, args = _str(call.get("name")), to_json(call.get("args", {}))
        return (
            NewPart(PartKind.TOOL_CALL, text=args, tool_call_id=_str(call.get("id")), tool_name=name, raw_json=raw),
            f"tool call {name or '?'}: {args}",
        )
    response = part.get("functionResponse")
    if isinstance(response, dict):
        text, is_error = _response_text(response.get("response"))
        tool_id = _str(response.get("id"))
        return NewPart(PartKind.TOOL_RESULT, text=text, tool_call_id=tool_id, is_error=is_error, raw_json=raw), text
    data = part.get("inlineData") or part.get("fileData")
    if isinstance(data, dict):
        mime = _str(data.get("mimeType"))
        kind = PartKind.IMAGE if mime and mime.startswith("image/") else PartKind.FILE
        return NewPart(kind, text=mime, raw_json=raw), f"[{kind.value} {mime}]" if mime else f"[{kind.value}]"
    return NewPart(PartKind.OTHER, raw_json=raw), None


def _tool_call(call: dict[str, Any]) -> list[tuple[NewPart, str | None]]:
    """A ``toolCalls`` entry -> its call part and its result part (call ``raw_json`` without the result)."""
    call_id, name = _str(call.get("id")), _str(call.get("name"))
    args = to_json(call.get("args", {}))
    raw_call = to_json({k: v for k, v in call.items() if k != "result"})
    texts = [
        _response_text(p["functionResponse"].get("response"))
        for p in _parts(call.get("result"))
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]
    text = "\n".join(t for t, _ in texts) or (_str(call.get("resultDisplay")) or "")
    is_error = call.get("status") == "error" or any(err for _, err in texts)
    return [
        (
            NewPart(PartKind.TOOL_CALL, text=args, tool_call_id=call_id, tool_name=name, raw_json=raw_call),
            f"tool call {name or '?'}: {args}",
        ),
        (
            NewPart(
                PartKind.TOOL_RESULT,
                text=text,
                tool_call_id=call_id,
                is_error=is_error,
                raw_json=to_json(call.get("result")),
            ),
            text,
        ),
    ]


def _message(record: dict[str, Any], role: Role, timestamp: datetime | None) -> NewMessage:
    mapped: list[tuple[NewPart, str | None]] = []
    for thought in _parts(record.get("thoughts")):
        if isinstance(thought, dict):
            text = ": ".join(t for t in (_str(thought.get("subject")), _str(thought.get("description"))) if t)
            mapped.append((NewPart(PartKind.REASONING, text=text or None, raw_json=to_json(thought)), None))
    mapped.extend(map_part(part) for part in _parts(record.get("content")))
    for call in _parts(record.get("toolCalls")):
        if isinstance(call, dict):
            mapped.extend(_tool_call(call))
    parts = [part for part, _ in mapped]
    if role is Role.USER and parts and all(p.kind is PartKind.TOOL_RESULT for p in parts):
        role = Role.TOOL
    text = "\n".join(t for _, t in mapped if t)
    return NewMessage(role=role, content=text, token_count=estimate_tokens(text), created_at=timestamp, parts=parts)


def _is_header(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
    )


class GeminiCliFormat:
    """Maps Gemini CLI chat-recording lines to LCM messages and parts."""

    identity = IDENTITY
    provider = "gemini"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """``$GEMINI_CLI_HOME/.gemini/tmp`` (``GEMINI_CLI_HOME`` defaults to ``$HOME``; may not exist)."""
        home = env.get("GEMINI_CLI_HOME") or env.get("HOME")
        return [(Path(home).expanduser() if home else Path.home()) / ".gemini" / "tmp"]

    def discover(self, root: Path) -> Iterator[Path]:
        """Every ``*.jsonl`` under a ``chats`` directory below ``root`` (sub-agent files included), sorted."""
        if not root.is_dir():
            return
        found = {p for p in root.rglob("*.jsonl") if p.is_file() and "chats" in p.relative_to(root).parts}
        yield from sorted(found, key=lambda p: p.relative_to(root).as_posix())

    def sniff(self, head: Sequence[Any]) -> bool:
        """The first line is a session header (``sessionId`` and ``projectHash``), never a Claude/Codex record."""
        records = [r for r in head if isinstance(r, dict)]
        return bool(records) and _is_header(records[0]) and "type" not in records[0]

    def map_record(self, record: Any) -> MappedRecord:
        """One parsed line -> header identity, a message (message records), or a native-only record."""
        if not isinstance(record, dict):
            return MappedRecord()
        if _is_header(record):
            dirs = record.get("directories")
            cwd = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None
            metadata = {"recordType": "session", "sessionId": record["sessionId"]}
            metadata.update(string_fields(record, HEADER_FIELDS))
            return MappedRecord(
                session_id=record["sessionId"] or None,
                cwd=cwd,
                timestamp=parse_timestamp(record.get("startTime")),
                metadata=metadata,
            )
        if isinstance(record.get("$set"), dict):
            return MappedRecord(metadata={"recordType": "update", "keys": ",".join(sorted(record["$set"]))})
        if isinstance(record.get("$rewindTo"), str):
            return MappedRecord(metadata={"recordType": "rewind", "rewindTo": record["$rewindTo"]})
        timestamp = parse_timestamp(record.get("timestamp"))
        metadata = {"recordType": "message", **string_fields(record, MESSAGE_FIELDS)}
        kind = record.get("type")
        role = ROLES.get(kind) if isinstance(kind, str) and isinstance(record.get("id"), str) else None
        message = _message(record, role, timestamp) if role is not None else None
        return MappedRecord(timestamp=timestamp, message=message, metadata=metadata)

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES


STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {"sessionId": "s", "projectHash": "0" * 64, "startTime": "2025-01-01T00:00:00.000Z", "kind": "main"},
    {"id": "m1", "timestamp": "2025-01-01T00:00:00.000Z", "type": "user", "content": [{"text": "hello"}]},
    {
        "id": "m2",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "type": "gemini",
        "content": [{"text": "hello"}],
        "thoughts": [{"subject": "s", "description": "d", "timestamp": "2025-01-01T00:00:00.000Z"}],
        "toolCalls": [
            {
                "id": "c1",
                "name": "run_shell_command",
                "args": {"command": "ls"},
                "result": [
                    {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "ok"}}}
                ],
                "status": "success",
                "timestamp": "2025-01-01T00:00:00.000Z",
            }
        ],
        "tokens": {"input": 1, "output": 1, "cached": 0, "total": 2},
        "model": "gemini-2.5-pro",
    },
    {"id": "m3", "timestamp": "2025-01-01T00:00:00.000Z", "type": "info", "content": "note"},
    {"$set": {"lastUpdated": "2025-01-01T00:00:00.000Z"}},
    {"$rewindTo": "m2"},
)

FORMAT = GeminiCliFormat()
