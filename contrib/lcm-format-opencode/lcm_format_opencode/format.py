"""The ``opencode/session-jsonl/v1`` transcript format (OpenCode sessions as LCM's plugin mirrors them).

OpenCode (1.x) keeps its sessions in a SQLite database
(``$XDG_DATA_HOME/opencode/opencode.db``), which is no transcript file. LCM's
OpenCode plugin (``plugin.js``, installed by ``lcm install opencode``) appends
each session, as OpenCode's own API and events give it, to
``$XDG_DATA_HOME/opencode/lcm-sessions/<session id>.jsonl``
(``XDG_DATA_HOME`` defaults to ``~/.local/share``). Two kinds of line, each
wrapping OpenCode's objects unchanged:

* ``{"type": "session", "info": <Session>}`` first: ``id``, ``directory`` (the
  cwd), ``parentID`` for a sub-agent's session (the ``task`` tool starts one);
* ``{"type": "message", "info": <Message>, "parts": [<Part>...]}`` once per
  finished message: ``info.role`` is ``user`` or ``assistant``; parts are
  ``text``, ``reasoning``, ``tool`` (a call and, in ``state``, its result),
  ``file``, and OpenCode's bookkeeping (``step-start``, ``step-finish``,
  ``snapshot``, ``patch``, ``agent``, ``subtask``, ``retry``, ``compaction``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.formats import (
    CLIENT_AUTHORED,
    CLIENT_META,
    COMPACT_SUMMARY,
    FormatIdentity,
    MappedRecord,
    NewMessage,
    NewPart,
    PartKind,
    PartView,
    Role,
    Spawn,
    SpawnedBy,
    parse_timestamp,
    prompt_sha256,
    string_fields,
    to_json,
)
from lcm_framework.plugin_api.summarize import estimate_tokens

IDENTITY = FormatIdentity("opencode", "session-jsonl", "v1")
SESSIONS_DIR = ("opencode", "lcm-sessions")
SPAWN_TOOL = "task"
SESSION_FIELDS = {"id": "sessionId", "slug": "slug", "version": "version", "projectID": "projectId",
                  "parentID": "parentId", "title": "title"}
MESSAGE_FIELDS = {"id": "id", "role": "role", "parentID": "parentId", "agent": "agent", "modelID": "model",
                  "providerID": "provider", "finish": "finish"}
ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tool(part: dict[str, Any]) -> list[tuple[NewPart, str | None]]:
    """A ``tool`` part -> its call (the input) and, once it ran, its result (``output``, or ``error``)."""
    state = _dict(part.get("state"))
    call_id, name = _str(part.get("callID")), _str(part.get("tool"))
    arguments = to_json(state.get("input", {}))
    mapped: list[tuple[NewPart, str | None]] = [
        (NewPart(PartKind.TOOL_CALL, text=arguments, tool_call_id=call_id, tool_name=name, raw_json=to_json(part)),
         f"tool call {name or '?'}: {arguments}")]
    status = state.get("status")
    if status in ("completed", "error"):
        found = state.get("output") if status == "completed" else state.get("error")
        text = found if isinstance(found, str) else to_json(found)
        mapped.append((NewPart(PartKind.TOOL_RESULT, text=text, tool_call_id=call_id, tool_name=name,
                               is_error=status == "error"), text))
    return mapped


def map_part(part: Any) -> list[tuple[NewPart, str | None]]:
    """One OpenCode part -> message parts and their contribution to the plain text."""
    if not isinstance(part, dict):
        return [(NewPart(PartKind.OTHER, raw_json=to_json(part)), None)]
    kind, raw = part.get("type"), to_json(part)
    text = part.get("text") if isinstance(part.get("text"), str) else None
    if kind == "text" and text is not None:
        authored = CLIENT_AUTHORED if part.get("synthetic") is True else None
        return [(NewPart(PartKind.TEXT, text=text, raw_json=raw, metadata=authored), text)]
    if kind == "reasoning" and text is not None:
        return [(NewPart(PartKind.REASONING, text=text, raw_json=raw), None)]
    if kind == "tool":
        return _tool(part)
    if kind == "file":
        mime = _str(part.get("mime"))
        name = _str(part.get("filename")) or _str(part.get("url"))
        image = bool(mime and mime.startswith("image/"))
        return [(NewPart(PartKind.IMAGE if image else PartKind.FILE, text=name, raw_json=raw),
                 f"[{'image' if image else 'file'} {name}]" if name else None)]
    return [(NewPart(PartKind.OTHER, raw_json=raw), None)]


def _message(info: dict[str, Any], parts: list[Any], timestamp: datetime | None) -> NewMessage | None:
    role = ROLES.get(info.get("role"))  # type: ignore[arg-type]
    if role is None:
        return None
    mapped = [m for part in parts for m in map_part(part)]
    text = "\n".join(t for _, t in mapped if t)
    return NewMessage(role, text, estimate_tokens(text), timestamp, parts=[p for p, _ in mapped])


def _kind(info: dict[str, Any], parts: list[Any]) -> str | None:
    """OpenCode's compaction: the user message that asks for it, and the assistant's summary."""
    if info.get("role") == "assistant" and info.get("summary") is True:
        return COMPACT_SUMMARY
    if any(isinstance(p, dict) and p.get("type") == "compaction" for p in parts):
        return CLIENT_META
    return None


class OpenCodeFormat:
    """Maps the session mirrors of LCM's OpenCode plugin to LCM messages; a sub-agent's session is a run."""

    identity = IDENTITY
    provider = "opencode"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """``$XDG_DATA_HOME/opencode/lcm-sessions`` (``XDG_DATA_HOME`` defaults to ``$HOME/.local/share``)."""
        given = env.get("XDG_DATA_HOME")
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return [(Path(given).expanduser() if given else home / ".local" / "share").joinpath(*SESSIONS_DIR)]

    def discover(self, root: Path) -> Iterator[Path]:
        """``ses_*.jsonl`` directly under ``root``, sorted."""
        if root.is_dir():
            yield from sorted(p for p in root.glob("ses_*.jsonl") if p.is_file())

    def sniff(self, head: Sequence[Any]) -> bool:
        """The first record is a ``session`` line naming the session (``info.id``) and its ``directory``."""
        records = [r for r in head if isinstance(r, dict)]
        return bool(records) and _is_session(records[0])

    def map_record(self, record: Any) -> MappedRecord:
        """A ``session`` line -> the session's identity (a sub-agent's names its parent); a ``message`` line ->
        a message; anything else -> a native-only record."""
        if not isinstance(record, dict):
            return MappedRecord()
        info = _dict(record.get("info"))
        if _is_session(record):
            parent = _str(info.get("parentID"))
            spawned = SpawnedBy(parent, info["id"], own_session=True) if parent else None
            return MappedRecord(session_id=info["id"], cwd=_str(info.get("directory")),
                                timestamp=parse_timestamp(_dict(info.get("time")).get("created")),
                                metadata={"recordType": "session", **string_fields(info, SESSION_FIELDS)},
                                spawned_by=spawned)
        metadata = {"recordType": str(record.get("type")), **string_fields(info, MESSAGE_FIELDS)}
        if record.get("type") != "message" or not isinstance(record.get("parts"), list):
            return MappedRecord(metadata=metadata)
        timestamp = parse_timestamp(_dict(info.get("time")).get("created"))
        kind = _kind(info, record["parts"])
        message = None if kind else _message(info, record["parts"], timestamp)
        cwd = _str(_dict(info.get("path")).get("cwd"))
        return MappedRecord(cwd=cwd, timestamp=timestamp, message=message, metadata=metadata, kind=kind)

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES

    # --- sub-agents (SubagentFormat): a sub-agent's session is a file of its own, named by its session line ---

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        return None

    def companions(self, path: Path) -> list[Path]:
        return []

    def spawn(self, part: PartView) -> Spawn | None:
        """A ``task`` call, matched by the prompt it gives the sub-agent (its session's first user message)."""
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


def _is_session(record: Any) -> bool:
    info = record.get("info") if isinstance(record, dict) else None
    return (record.get("type") == "session" and isinstance(info, dict) and isinstance(info.get("id"), str)
            and bool(info["id"]) and isinstance(info.get("directory"), str))


_TIME = {"created": 1767225600000, "updated": 1767225600000}
STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {"type": "session", "info": {"id": "ses_1", "slug": "s", "version": "1.18.33", "projectID": "global",
                                 "directory": "/p", "title": "t", "time": _TIME}},
    {"type": "message", "info": {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1},
                                 "agent": "build", "model": {"providerID": "p", "modelID": "m"}},
     "parts": [{"id": "prt_1", "messageID": "msg_1", "sessionID": "ses_1", "type": "text", "text": "hi"}]},
    {"type": "message", "info": {"id": "msg_2", "sessionID": "ses_1", "role": "assistant", "parentID": "msg_1",
                                 "mode": "build", "cost": 0, "modelID": "m", "providerID": "p", "finish": "stop",
                                 "tokens": {"total": 2, "input": 1, "output": 1, "reasoning": 0,
                                            "cache": {"read": 0, "write": 0}},
                                 "time": {"created": 1, "completed": 2}},
     "parts": [{"id": "prt_2", "messageID": "msg_2", "sessionID": "ses_1", "type": "step-start", "snapshot": "0"},
               {"id": "prt_3", "messageID": "msg_2", "sessionID": "ses_1", "type": "tool", "tool": "bash",
                "callID": "c1", "state": {"status": "completed", "input": {"command": "ls"}, "output": "ok",
                                          "metadata": {"exit": 0}, "title": "ls", "time": {"start": 1, "end": 2}}},
               {"id": "prt_4", "messageID": "msg_2", "sessionID": "ses_1", "type": "step-finish",
                "reason": "stop", "cost": 0, "tokens": {"total": 2, "input": 1, "output": 1}}]},
)

FORMAT = OpenCodeFormat()
