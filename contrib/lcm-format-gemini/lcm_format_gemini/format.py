"""The ``gemini-cli/gemini-jsonl/v1`` transcript format.

Gemini CLI (0.40 and later; 0.61.0 tested) appends its chat recording to
``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``
(``GEMINI_CLI_HOME`` defaults to the home directory); a sub-agent's run goes to
``chats/<parent session id>/<its session id>.jsonl``. Four kinds of line
(``packages/core/src/services/chatRecordingService.ts``):

* the session header ``{"sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories"?}``;
* message records ``{"id", "timestamp", "type": "user"|"gemini"|"info"|"warning"|"error", "content", ...}``
  where ``content`` is a string or a list of Gemini API parts, and ``gemini`` records add ``thoughts``,
  ``toolCalls`` (each with its ``result``), ``tokens`` and ``model``;
* metadata updates ``{"$set": {...}}`` (``$set.messages`` restates the whole history);
* rewinds ``{"$rewindTo": "<message id>"}``.

Gemini CLI re-appends a model message (same ``id``) when it changes: first its
text, thoughts and tokens, then again with its finished ``toolCalls``. A
version with ``toolCalls`` therefore stands for those calls and their results
only (its text and thoughts were written with the earlier version), a version
with nothing in it is no message, and a user record holding only function
responses (0.44+ restates each call's result that way) is client bookkeeping:
each turn is stored once, as Gemini CLI's own reader reconstructs it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.formats import (
    AGENT_SCAFFOLDING,
    CLIENT_AUTHORED,
    CLIENT_META,
    LCM_CONTEXT,
    FormatIdentity,
    MappedRecord,
    NewMessage,
    NewPart,
    PartKind,
    PartView,
    Role,
    Spawn,
    SpawnedBy,
    is_lcm_context,
    parse_timestamp,
    string_fields,
    to_json,
)
from lcm_framework.plugin_api.summarize import estimate_tokens

IDENTITY = FormatIdentity("gemini-cli", "gemini-jsonl", "v1")
NOTICES = frozenset({"info", "warning", "error"})
"""UI notices: never part of the model's history (Gemini CLI skips them when it resumes)."""
MESSAGE_FIELDS = {"id": "id", "type": "type", "model": "model"}
HEADER_FIELDS = {"projectHash": "projectHash", "startTime": "startTime", "kind": "kind"}
SCAFFOLDING_PREFIX = "<session_context>"
"""The environment context Gemini CLI opens every session with."""
_HOOK_CONTEXT = re.compile(r"<hook_context>(.*?)</hook_context>(?:\n\n)?", re.DOTALL)
"""How Gemini CLI wraps a hook's ``additionalContext`` in the prompt (SessionStart prepends, BeforeAgent appends)."""
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _parts(content: Any) -> list[Any]:
    if content is None:
        return []
    return content if isinstance(content, list) else [content]


def _text(content: Any) -> str:
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) if isinstance(p, dict) else ""
                   for p in _parts(content))


def _response_text(response: Any) -> tuple[str, bool]:
    """Text of a function response and whether it failed (an ``error``, or a shell ``Exit Code`` other than 0)."""
    if isinstance(response, dict):
        if isinstance(response.get("error"), str):
            return response["error"], True
        if isinstance(response.get("output"), str):
            exit_code = _EXIT_CODE.search(response["output"])
            return response["output"], exit_code is not None and exit_code.group(1) != "0"
    return to_json(response), False


Mapped = tuple[NewPart, str | None]
"""A part and its contribution to the message's plain text."""


def map_part(part: Any) -> Mapped:
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


def _prompt_parts(part: Any) -> list[Mapped]:
    """A user part without LCM's own context: a ``<hook_context>`` holding LCM's restored context or recall is
    dropped, another hook's context is kept as a client-authored part, the prompt around it as typed."""
    text = part.get("text") if isinstance(part, dict) and part.get("thought") is not True else None
    if not isinstance(text, str) or "<hook_context>" not in text:
        return [map_part(part)]
    out: list[Mapped] = []
    rest = 0
    for found in _HOOK_CONTEXT.finditer(text):
        out += _typed(text[rest:found.start()])
        context = found.group(1)
        if not is_lcm_context(context.lstrip()):
            out.append((NewPart(PartKind.TEXT, text=found.group(0), raw_json=to_json({"text": found.group(0)}),
                                metadata=CLIENT_AUTHORED), found.group(0)))
        rest = found.end()
    return out + _typed(text[rest:])


def _typed(text: str) -> list[Mapped]:
    return [(NewPart(PartKind.TEXT, text=text, raw_json=to_json({"text": text})), text)] if text.strip() else []


def _tool_call(call: dict[str, Any]) -> list[Mapped]:
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


def _model_parts(record: dict[str, Any]) -> list[Mapped]:
    calls = [c for c in _parts(record.get("toolCalls")) if isinstance(c, dict)]
    if calls:  # the version that adds the finished calls: its text and thoughts were written before
        return [mapped for call in calls for mapped in _tool_call(call)]
    mapped: list[Mapped] = []
    for thought in _parts(record.get("thoughts")):
        if isinstance(thought, dict):
            text = ": ".join(t for t in (_str(thought.get("subject")), _str(thought.get("description"))) if t)
            mapped.append((NewPart(PartKind.REASONING, text=text or None, raw_json=to_json(thought)), None))
    return mapped + [map_part(p) for p in _parts(record.get("content")) if p != ""]


def _user_kind(content: Any) -> str | None:
    """Why a user record is not conversation: Gemini CLI's session context, LCM's own context, or a
    restatement of function responses that the calls' ``toolCalls`` entries already hold."""
    parts = _parts(content)
    if _text(content).lstrip().startswith(SCAFFOLDING_PREFIX):
        return AGENT_SCAFFOLDING
    if parts and all(isinstance(p, dict) and isinstance(p.get("functionResponse"), dict) for p in parts):
        return CLIENT_META
    return None


def _message(role: Role, mapped: list[Mapped], timestamp: datetime | None) -> NewMessage | None:
    parts = [part for part, _ in mapped]
    if not any(p.text or p.kind not in (PartKind.TEXT, PartKind.REASONING) for p in parts):
        return None
    text = "\n".join(t for _, t in mapped if t)
    return NewMessage(role=role, content=text, token_count=estimate_tokens(text), created_at=timestamp, parts=parts)


def _history_kind(messages: list[Any]) -> str:
    """A ``$set.messages`` history restatement: scaffolding when it holds only the session context."""
    only_context = all(isinstance(m, dict) and m.get("type") == "user" and _user_kind(m.get("content"))
                       == AGENT_SCAFFOLDING for m in messages)
    return AGENT_SCAFFOLDING if messages and only_context else CLIENT_META


def _is_header(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
    )


def _header(record: dict[str, Any]) -> MappedRecord:
    dirs = record.get("directories")
    cwd = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None
    metadata = {"recordType": "session", "sessionId": record["sessionId"]}
    metadata.update(string_fields(record, HEADER_FIELDS))
    return MappedRecord(session_id=record["sessionId"] or None, cwd=cwd,
                        timestamp=parse_timestamp(record.get("startTime")), metadata=metadata)


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
        if _is_header(record) and "id" not in record:
            return _header(record)
        update = record.get("$set")
        if isinstance(update, dict):
            history = update.get("messages")
            return MappedRecord(metadata={"recordType": "update", "keys": ",".join(sorted(update))},
                                kind=_history_kind(history) if isinstance(history, list) else None)
        if isinstance(record.get("$rewindTo"), str):
            return MappedRecord(metadata={"recordType": "rewind", "rewindTo": record["$rewindTo"]})
        timestamp = parse_timestamp(record.get("timestamp"))
        metadata = {"recordType": "message", **string_fields(record, MESSAGE_FIELDS)}
        kind, message = self._turn(record, timestamp) if isinstance(record.get("id"), str) else (None, None)
        return MappedRecord(timestamp=timestamp, message=message, metadata=metadata, kind=kind)

    def _turn(self, record: dict[str, Any], timestamp: datetime | None) -> tuple[str | None, NewMessage | None]:
        kind = record.get("type")
        if kind in NOTICES:
            return CLIENT_META, None
        if kind == "gemini":
            return None, _message(Role.ASSISTANT, _model_parts(record), timestamp)
        if kind != "user":
            return None, None
        native = _user_kind(record.get("content"))
        if native:
            return native, None
        message = _message(Role.USER, [m for p in _parts(record.get("content")) for m in _prompt_parts(p)], timestamp)
        return (LCM_CONTEXT, None) if message is None and "<hook_context>" in _text(record.get("content")) \
            else (None, message)

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES

    # --- sub-agents (``SubagentFormat``) -------------------------------------------

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        """``chats/<parent session id>/<run's session id>.jsonl``: a sub-agent's run, stating its own id."""
        if path.parent.parent.name != "chats" or path.parent.name == "chats":
            return None
        return SpawnedBy(path.parent.name, path.stem, own_session=True)

    def companions(self, path: Path) -> list[Path]:
        """The runs of the session in ``chats/session-*.jsonl``: ``chats/<its session id>/*.jsonl``."""
        if path.parent.name != "chats":
            return []
        session_id = _header_session(path)
        runs = path.parent / session_id if session_id else None
        return sorted(p for p in runs.glob("*.jsonl") if p.is_file()) if runs and runs.is_dir() else []

    def spawn(self, part: PartView) -> Spawn | None:
        """Gemini CLI names a run in no part (its ``agentId`` sits in the call's ``toolCalls`` entry): runs link to
        their parent session, not to the call."""
        return None


def _header_session(path: Path) -> str | None:
    """The ``sessionId`` of a recording's header line (None when unreadable); a file name keeps only 8 chars."""
    try:
        with path.open("rb") as fh:
            header = json.loads(fh.readline(64 * 1024))
    except (OSError, ValueError):
        return None
    session = header.get("sessionId") if isinstance(header, dict) else None
    return session if isinstance(session, str) and session and "/" not in session and session != ".." else None


STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {"sessionId": "s", "projectHash": "0" * 64, "startTime": "2025-01-01T00:00:00.000Z", "kind": "main"},
    {"id": "m1", "timestamp": "2025-01-01T00:00:00.000Z", "type": "user", "content": [{"text": "hello"}]},
    {
        "id": "m2",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "type": "gemini",
        "content": [{"text": "hello"}],
        "thoughts": [{"subject": "s", "description": "d", "timestamp": "2025-01-01T00:00:00.000Z"}],
        "tokens": {"input": 1, "output": 1, "cached": 0, "total": 2},
        "model": "gemini-2.5-pro",
    },
    {
        "id": "m2",
        "timestamp": "2025-01-01T00:00:00.000Z",
        "type": "gemini",
        "content": "",
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
        "model": "gemini-2.5-pro",
    },
    {"id": "m3", "timestamp": "2025-01-01T00:00:00.000Z", "type": "info", "content": "note"},
    {"$set": {"lastUpdated": "2025-01-01T00:00:00.000Z"}},
    {"$rewindTo": "m2"},
)

FORMAT = GeminiCliFormat()
