"""The ``copilot-cli/events-jsonl/v1`` transcript format (GitHub Copilot CLI session event logs).

Copilot CLI (1.0 and later) appends every event of a session to
``$COPILOT_HOME/session-state/<session id>/events.jsonl`` (``COPILOT_HOME``
defaults to ``~/.copilot``). Each line is an envelope
``{"type", "data", "id", "timestamp", "parentId", "agentId"?, "ephemeral"?}``
(``schemas/session-events.schema.json`` of the CLI's package). The first one
is ``session.start`` (session id, cwd); ``user.message``,
``assistant.message`` (its ``toolRequests`` are the tool calls) and
``tool.execution_complete`` (a call's result) become messages; the system
prompt (``system.message``), notifications and compaction summaries are kept as
native records of their own kind, and every other event (turn boundaries,
usage, hooks, shutdown) as a native record only. A sub-agent started by the
``task`` tool writes its events into the same file, each carrying the
sub-agent's ``agentId``: they form a run of their own, matched to the ``task``
call by the prompt the call gave it (the run's first user message).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.formats import (
    AGENT_SCAFFOLDING,
    CLIENT_META,
    COMPACT_SUMMARY,
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
    SubagentRef,
    is_lcm_context,
    parse_timestamp,
    prompt_sha256,
    string_fields,
    to_json,
)
from lcm_framework.plugin_api.summarize import estimate_tokens

IDENTITY = FormatIdentity("copilot-cli", "events-jsonl", "v1")
EVENTS_FILE = "events.jsonl"
SPAWN_TOOL = "task"
ENVELOPE_FIELDS = {"type": "recordType", "id": "id", "parentId": "parentId", "agentId": "agentId"}
START_FIELDS = {"sessionId": "sessionId", "copilotVersion": "copilotVersion", "producer": "producer",
                "selectedModel": "selectedModel", "startTime": "startTime"}
MESSAGE_FIELDS = {"messageId": "messageId", "model": "model", "turnId": "turnId", "source": "source",
                  "interactionId": "interactionId", "toolCallId": "toolCallId"}
# Events that read like a message but are the client's own: kept native only, under their kind.
META_KINDS = {"system.message": AGENT_SCAFFOLDING, "system.notification": CLIENT_META,
              "session.compaction_complete": COMPACT_SUMMARY}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _user(data: dict[str, Any], timestamp: datetime | None) -> tuple[NewMessage, str | None]:
    """A ``user.message``: its ``content`` (what the user typed; ``transformedContent``, the model's view with
    timestamps and hook context, stays in the part's raw JSON) and one part per attachment."""
    content = data.get("content")
    text = content if isinstance(content, str) else ""
    parts = [NewPart(PartKind.TEXT, text=text, raw_json=to_json(data))]
    for attachment in data.get("attachments") or []:
        if isinstance(attachment, dict):
            image = str(attachment.get("mimeType", "")).startswith("image/")
            name = _str(attachment.get("path")) or _str(attachment.get("displayName"))
            parts.append(NewPart(PartKind.IMAGE if image else PartKind.FILE, text=name, raw_json=to_json(attachment)))
    source = _str(data.get("source")) or ""
    kind = LCM_CONTEXT if is_lcm_context(text.lstrip()) else AGENT_SCAFFOLDING if source.startswith("skill-") \
        else None
    return NewMessage(Role.USER, text, estimate_tokens(text), timestamp, parts=parts), kind


def _assistant(data: dict[str, Any], timestamp: datetime | None) -> NewMessage:
    """An ``assistant.message``: its reasoning, its text and one tool call part per ``toolRequests`` entry."""
    parts: list[NewPart] = []
    texts: list[str] = []
    reasoning = _str(data.get("reasoningText"))
    if reasoning:
        parts.append(NewPart(PartKind.REASONING, text=reasoning))
    content = _str(data.get("content"))
    if content:
        parts.append(NewPart(PartKind.TEXT, text=content))
        texts.append(content)
    for request in data.get("toolRequests") or []:
        if isinstance(request, dict):
            name, arguments = _str(request.get("name")), to_json(request.get("arguments", {}))
            parts.append(NewPart(PartKind.TOOL_CALL, text=arguments, tool_call_id=_str(request.get("toolCallId")),
                                 tool_name=name, raw_json=to_json(request)))
            texts.append(f"tool call {name or '?'}: {arguments}")
    text = "\n".join(texts)
    return NewMessage(Role.ASSISTANT, text, estimate_tokens(text), timestamp, parts=parts)


def _tool_result(data: dict[str, Any], timestamp: datetime | None) -> NewMessage:
    """A ``tool.execution_complete``: the result's ``content`` (or the error's ``message``) for its call."""
    failed = data.get("success") is not True
    found = _dict(data.get("error")).get("message") if failed else _dict(data.get("result")).get("content")
    text = found if isinstance(found, str) else to_json(data.get("error") if failed else data.get("result"))
    part = NewPart(PartKind.TOOL_RESULT, text=text, tool_call_id=_str(data.get("toolCallId")), is_error=failed,
                   raw_json=to_json(data))
    return NewMessage(Role.TOOL, text, estimate_tokens(text), timestamp, parts=[part])


def _is_start(record: Any) -> bool:
    return (isinstance(record, dict) and record.get("type") == "session.start"
            and isinstance(_dict(record.get("data")).get("sessionId"), str))


class CopilotCliFormat:
    """Maps Copilot CLI session events to LCM messages and parts; sub-agent runs are kept inline."""

    identity = IDENTITY
    provider = "copilot"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """``$COPILOT_HOME/session-state`` (``COPILOT_HOME`` defaults to ``$HOME/.copilot``; may not exist)."""
        given = env.get("COPILOT_HOME")
        if given:
            return [Path(given).expanduser() / "session-state"]
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return [home / ".copilot" / "session-state"]

    def discover(self, root: Path) -> Iterator[Path]:
        """``<session id>/events.jsonl`` under ``root``, sorted."""
        if root.is_dir():
            yield from sorted(p for p in root.glob(f"*/{EVENTS_FILE}") if p.is_file())

    def sniff(self, head: Sequence[Any]) -> bool:
        """The first record is a ``session.start`` event with a ``sessionId``."""
        records = [r for r in head if isinstance(r, dict)]
        return bool(records) and _is_start(records[0])

    def map_record(self, record: Any) -> MappedRecord:
        """One event -> the session's identity (``session.start``), a message, or a native-only record."""
        if not isinstance(record, dict):
            return MappedRecord()
        kind = record.get("type")
        data = _dict(record.get("data"))
        timestamp = parse_timestamp(record.get("timestamp"))
        metadata = string_fields(record, ENVELOPE_FIELDS)
        agent = _str(record.get("agentId"))
        subagent = SubagentRef(agent_id=agent) if agent else None
        if _is_start(record):
            context = _dict(data.get("context"))
            return MappedRecord(session_id=data["sessionId"] or None, cwd=_str(context.get("cwd")),
                                timestamp=parse_timestamp(data.get("startTime")) or timestamp,
                                metadata={**metadata, **string_fields(data, START_FIELDS)})
        message: NewMessage | None = None
        record_kind = META_KINDS.get(kind) if isinstance(kind, str) else None
        if kind == "user.message":
            message, record_kind = _user(data, timestamp)
        elif kind == "assistant.message":
            message = _assistant(data, timestamp)
        elif kind == "tool.execution_complete":
            message = _tool_result(data, timestamp)
        if message is not None:
            metadata.update(string_fields(data, MESSAGE_FIELDS))
        cwd = _str(_dict(data.get("context")).get("cwd")) if kind == "session.resume" else None
        return MappedRecord(cwd=cwd, timestamp=timestamp, message=None if record_kind else message,
                            metadata=metadata, subagent=subagent, kind=record_kind)

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES

    # --- sub-agents (SubagentFormat): runs are inline, so no file is a run and none has companions ---

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        return None

    def companions(self, path: Path) -> list[Path]:
        return []

    def spawn(self, part: PartView) -> Spawn | None:
        """A ``task`` call, matched by the prompt it gives the sub-agent (the run's first user message)."""
        if part.kind is not PartKind.TOOL_CALL or part.tool_name != SPAWN_TOOL or not part.tool_call_id:
            return None
        try:
            arguments = json.loads(part.text or "")
        except ValueError:
            return None
        prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
        if not isinstance(prompt, str):
            return None
        return Spawn(part.tool_call_id, prompt_sha256=prompt_sha256(prompt),
                     agent_type=_str(arguments.get("agent_type")))


_T = "2026-01-01T00:00:00.000Z"
STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {"type": "session.start", "data": {"sessionId": "s", "version": 1, "producer": "copilot-agent",
                                       "copilotVersion": "1.0.102", "startTime": _T,
                                       "context": {"cwd": "/p", "gitRoot": "/p", "branch": "main"}},
     "id": "e1", "timestamp": _T, "parentId": None},
    {"type": "user.message", "data": {"content": "hello", "transformedContent": "hello", "messageId": "m1",
                                      "interactionId": "i", "turnId": "0"},
     "id": "e2", "timestamp": _T, "parentId": "e1"},
    {"type": "assistant.message", "data": {"messageId": "m2", "model": "gpt-4.1", "content": "ok",
                                           "toolRequests": [{"toolCallId": "c1", "name": "bash", "type": "function",
                                                             "arguments": {"command": "ls", "description": "list"}}],
                                           "turnId": "0", "outputTokens": 1},
     "id": "e3", "timestamp": _T, "parentId": "e2"},
    {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True, "result": {"content": "ok"},
                                                 "turnId": "0"},
     "id": "e4", "timestamp": _T, "parentId": "e3", "agentId": "a1"},
    {"type": "session.usage_record", "data": {"usage": {"model": "gpt-4.1", "inputTokens": 1, "outputTokens": 1,
                                                        "cacheReadTokens": 0, "cacheWriteTokens": 0}},
     "id": "e5", "timestamp": _T, "parentId": "e4", "ephemeral": True},
    {"type": "hook.end", "data": {"hookInvocationId": "h", "hookType": "sessionStart", "success": True,
                                  "output": {"additionalContext": "x"}},
     "id": "e6", "timestamp": _T, "parentId": "e5"},
)

FORMAT = CopilotCliFormat()
