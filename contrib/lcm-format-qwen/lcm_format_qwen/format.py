"""The ``qwen-code/qwen-jsonl/v1`` transcript format.

Qwen Code (0.24.4 tested) appends each session to
``$QWEN_HOME/projects/<sanitized project root>/chats/<session id>.jsonl``
(``QWEN_HOME`` defaults to ``~/.qwen``) and each sub-agent's run to
``projects/<...>/subagents/<session id>/agent-<agent id>.jsonl`` with an
``agent-<agent id>.meta.json`` beside it (``agentType``, ``toolUseId``). Every
line is one record (``packages/core/src/services/chatRecordingService.ts``):
``{"uuid", "parentUuid", "sessionId", "timestamp", "type", "provenance", "cwd", "version", "gitBranch", ...}``
with

* ``type: "user"`` (``message: {"role": "user", "parts"}``; a ``subtype`` names injected turns),
* ``type: "assistant"`` (``message: {"role": "model", "parts"}``, ``model``, ``usageMetadata``),
* ``type: "tool_result"`` (``message`` of ``functionResponse`` parts and ``toolCallResult``: ``callId``,
  ``status``, ``resultDisplay``),
* ``type: "system"`` with a ``subtype`` (``ui_telemetry``, ``attribution_snapshot``, ``chat_compression``,
  ``slash_command``, ``rewind``, ``custom_title``...): the client's bookkeeping.

``parts`` are Gemini API parts (Qwen Code is a Gemini CLI fork): ``{"text"}``,
``{"text", "thought": true}``, ``{"functionCall"}``, ``{"functionResponse"}``,
``{"inlineData"}`` / ``{"fileData"}``. A sub-agent's records add ``agentId`` and
``isSidechain: true`` and state the parent's ``sessionId``.
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

IDENTITY = FormatIdentity("qwen-code", "qwen-jsonl", "v1")
RECORD_FIELDS = {"type": "type", "subtype": "subtype", "uuid": "uuid", "parentUuid": "parentUuid",
                 "provenance": "provenance", "version": "version", "gitBranch": "gitBranch", "model": "model",
                 "agentId": "agentId", "agentName": "agentName", "isSidechain": "isSidechain"}
ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "tool_result": Role.TOOL}
TYPED_SUBTYPES = frozenset({"mid_turn_user_message", "realtime_message"})
"""User-record subtypes holding what the user typed; any other subtype is a turn the client injected."""
SPAWN_TOOL = "agent"
AGENT_FILE = re.compile(r"agent-(.+)\.jsonl")
MAX_META_BYTES = 64 * 1024


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _is_lcm_text(part: Any) -> bool:
    """A text part holding LCM's restored context or prompt-time recall (as a hook's additional context)."""
    text = part.get("text") if isinstance(part, dict) else None
    return isinstance(text, str) and is_lcm_context(text.lstrip())


def map_part(part: Any, *, failed: bool = False, authored: str | None = None) -> tuple[NewPart, str | None]:
    """One Gemini API part -> a message part and its contribution to the plain text (``failed``: the tool
    result the part holds is an error; ``authored``: part metadata of text the client wrote)."""
    raw = to_json(part)
    if not isinstance(part, dict):
        return NewPart(PartKind.OTHER, raw_json=raw), None
    text = part.get("text")
    if isinstance(text, str):
        if part.get("thought") is True:
            return NewPart(PartKind.REASONING, text=text, raw_json=raw), None
        return NewPart(PartKind.TEXT, text=text, raw_json=raw, metadata=authored), text
    call = part.get("functionCall")
    if isinstance(call, dict):
        name, args = _str(call.get("name")), to_json(call.get("args", {}))
        return (NewPart(PartKind.TOOL_CALL, text=args, tool_call_id=_str(call.get("id")), tool_name=name,
                        raw_json=raw), f"tool call {name or '?'}: {args}")
    response = part.get("functionResponse")
    if isinstance(response, dict):
        output = response.get("response")
        found = output.get("output") if isinstance(output, dict) else None
        error = output.get("error") if isinstance(output, dict) else None
        result = found if isinstance(found, str) else error if isinstance(error, str) else to_json(output)
        return (NewPart(PartKind.TOOL_RESULT, text=result, tool_call_id=_str(response.get("id")),
                        is_error=failed or isinstance(error, str), raw_json=raw), result)
    data = part.get("inlineData") or part.get("fileData")
    if isinstance(data, dict):
        mime = _str(data.get("mimeType"))
        kind = PartKind.IMAGE if mime and mime.startswith("image/") else PartKind.FILE
        return NewPart(kind, text=mime, raw_json=raw), f"[{kind.value} {mime}]" if mime else f"[{kind.value}]"
    return NewPart(PartKind.OTHER, raw_json=raw), None


def _message(record: dict[str, Any], role: Role, timestamp: datetime | None) -> NewMessage | None:
    body = record.get("message")
    parts = body.get("parts") if isinstance(body, dict) else None
    if not isinstance(parts, list):
        return None
    result = record.get("toolCallResult")
    failed = isinstance(result, dict) and (result.get("status") == "error" or bool(result.get("error")))
    authored = CLIENT_AUTHORED if role is Role.USER and record.get("subtype") not in (None, *TYPED_SUBTYPES) \
        else None
    mapped = [map_part(p, failed=failed, authored=authored) for p in parts if not _is_lcm_text(p)]
    if not mapped:
        return None
    text = "\n".join(t for _, t in mapped if t)
    return NewMessage(role=role, content=text, token_count=estimate_tokens(text), created_at=timestamp,
                      parts=[p for p, _ in mapped])


def _kind(record: dict[str, Any]) -> str | None:
    """Why a record is not conversation (None: it is, or it is no turn)."""
    kind = record.get("type")
    if kind == "system":
        return COMPACT_SUMMARY if record.get("subtype") == "chat_compression" else CLIENT_META
    body = record.get("message")
    parts = body.get("parts") if isinstance(body, dict) else None
    if kind == "user" and isinstance(parts, list) and parts and all(_is_lcm_text(p) for p in parts):
        return LCM_CONTEXT
    if kind == "user" and record.get("subtype") == "goal_runtime":
        return AGENT_SCAFFOLDING
    return None


class QwenCodeFormat:
    """Maps Qwen Code chat-recording records to LCM messages and parts."""

    identity = IDENTITY
    provider = "qwen"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """``$QWEN_HOME/projects`` (``QWEN_HOME`` defaults to ``$HOME/.qwen``; may not exist)."""
        given = env.get("QWEN_HOME")
        if given:
            return [Path(given).expanduser() / "projects"]
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return [home / ".qwen" / "projects"]

    def discover(self, root: Path) -> Iterator[Path]:
        """Every ``*.jsonl`` under a ``chats`` or ``subagents`` directory below ``root``, sorted."""
        if not root.is_dir():
            return
        found = {p for p in root.rglob("*.jsonl") if p.is_file()
                 and {"chats", "subagents"} & set(p.relative_to(root).parts)}
        yield from sorted(found, key=lambda p: p.relative_to(root).as_posix())

    def sniff(self, head: Sequence[Any]) -> bool:
        """Records with Qwen Code's envelope (``uuid``, ``sessionId``, ``type``) around Gemini API ``parts``."""
        records = [r for r in head if isinstance(r, dict)]
        return bool(records) and all(isinstance(r.get("uuid"), str) and isinstance(r.get("sessionId"), str)
                                     and r.get("type") in ("user", "assistant", "tool_result", "system")
                                     and "provenance" in r for r in records) \
            and any(isinstance(r.get("message"), dict) and isinstance(r["message"].get("parts"), list)
                    for r in records)

    def map_record(self, record: Any) -> MappedRecord:
        """One parsed record -> its session identity, metadata and (for turns) a message."""
        if not isinstance(record, dict):
            return MappedRecord()
        timestamp = parse_timestamp(record.get("timestamp"))
        kind = _kind(record)
        record_type = record.get("type")
        role = ROLES.get(record_type) if isinstance(record_type, str) else None
        subagent = None
        if record.get("isSidechain") is True:
            subagent = SubagentRef(_str(record.get("agentId")), _str(record.get("uuid")),
                                   _str(record.get("parentUuid")))
        return MappedRecord(
            session_id=_str(record.get("sessionId")),
            cwd=_str(record.get("cwd")),
            timestamp=timestamp,
            message=_message(record, role, timestamp) if role is not None and kind is None else None,
            metadata=string_fields(record, RECORD_FIELDS),
            subagent=subagent,
            kind=kind,
        )

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES

    # --- sub-agents (``SubagentFormat``) -------------------------------------------

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        """``subagents/<session id>/agent-<id>.jsonl`` is the run ``<id>``; its type and call come from
        ``agent-<id>.meta.json`` beside it when that exists."""
        found = AGENT_FILE.fullmatch(path.name)
        if found is None or path.parent.parent.name != "subagents":
            return None
        meta = _meta(path.with_name(f"agent-{found.group(1)}.meta.json"))
        return SpawnedBy(path.parent.name, found.group(1), _str(meta.get("agentType")),
                         tool_call_id=_str(meta.get("toolUseId")))

    def companions(self, path: Path) -> list[Path]:
        """``<project>/subagents/<session id>/agent-*.jsonl`` for ``<project>/chats/<session id>.jsonl``."""
        if path.parent.name != "chats":
            return []
        folder = path.parent.parent / "subagents" / path.stem
        return sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file()) if folder.is_dir() else []

    def spawn(self, part: PartView) -> Spawn | None:
        """An ``agent`` tool call, matched by the prompt it gave the run."""
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
                     agent_type=_str(arguments.get("subagent_type")))


def _meta(path: Path) -> dict[str, Any]:
    """A run's ``agent-<id>.meta.json``; absent, unreadable or odd: empty."""
    try:
        with path.open("rb") as handle:
            data = json.loads(handle.read(MAX_META_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


_BASE = {"uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2025-01-01T00:00:00.000Z",
         "cwd": "/p", "version": "0.24.4", "gitBranch": "main"}
STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {**_BASE, "type": "user", "provenance": "real_user", "message": {"role": "user", "parts": [{"text": "hi"}]}},
    {**_BASE, "type": "assistant", "provenance": "assistant_output", "model": "qwen3-coder-plus",
     "message": {"role": "model", "parts": [{"text": "t", "thought": True}, {"text": "hi"},
                                            {"functionCall": {"id": "c1", "name": "run_shell_command",
                                                              "args": {"command": "ls"}}}]},
     "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}},
    {**_BASE, "type": "tool_result", "provenance": "tool_result",
     "message": {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                                 "response": {"output": "ok"}}}]},
     "toolCallResult": {"callId": "c1", "status": "success", "resultDisplay": "ok"}},
    {**_BASE, "type": "system", "provenance": "system", "subtype": "ui_telemetry",
     "systemPayload": {"uiEvent": {"event.name": "qwen-code.api_response"}}},
)

FORMAT = QwenCodeFormat()
