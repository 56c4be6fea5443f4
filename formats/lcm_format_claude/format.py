"""The ``claude-code/claude-jsonl/v1`` transcript format.

Claude Code appends one JSON object per line to
``$CLAUDE_CONFIG_DIR/projects/<encoded-cwd>/<session-id>.jsonl`` (default
``~/.claude/projects``). ``user``, ``assistant`` and ``system`` records become
messages; ``summary`` records and every other record type stay native-only
records. Sidechain (sub-agent) records are marked with their run
(``MappedRecord.subagent``); sub-agent files (``<session>/subagents/agent-<id>.jsonl``
and the older ``agent-<id>.jsonl`` beside the session) are runs of their own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
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
)
from lcm_framework.plugin_api.summarize import estimate_tokens

from .blocks import map_content
from .structure import STRUCTURAL_SAMPLES

IDENTITY = FormatIdentity("claude-code", "claude-jsonl", "v1")
MESSAGE_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM}
KNOWN_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress"}
)
IDENTITY_KEYS = ("sessionId", "uuid", "leafUuid", "messageId")
RECORD_FIELDS = {
    "type": "type",
    "subtype": "subtype",
    "uuid": "uuid",
    "parentUuid": "parentUuid",
    "logicalParentUuid": "logicalParentUuid",
    "leafUuid": "leafUuid",
    "gitBranch": "gitBranch",
    "version": "version",
    "userType": "userType",
    "requestId": "requestId",
    "agentId": "agentId",
    "isSidechain": "isSidechain",
    "isMeta": "isMeta",
    "isCompactSummary": "isCompactSummary",
    "isApiErrorMessage": "isApiErrorMessage",
}
MESSAGE_FIELDS = {"model": "model", "id": "messageId", "stop_reason": "stopReason"}
SPAWN_TOOLS = frozenset({"Task", "Agent"})
"""Tools whose call starts a sub-agent run (Claude Code renamed ``Task`` to ``Agent``)."""
AGENT_FILE = re.compile(r"agent-(.+)\.jsonl")
AGENT_IN_RESULT = re.compile(r"\bagentId: ([A-Za-z0-9_@.-]+)")
"""How a ``Task``/``Agent`` result names its run (``agentId: a1b2c3d (for resuming ...)``)."""
MAX_META_BYTES = 64 * 1024
# User records Claude Code writes around a local command (/compact, /clear, !cmd...): echoes, not conversation.
LOCAL_COMMAND_TAGS = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")
# A slash command's own echo; it is conversation only when the user gave it arguments (their words).
COMMAND_TAGS = ("<command-name>", "<command-message>")
# ``attachment`` records Claude Code adds to the model's context: listings of agents, skills, MCP instructions.
SCAFFOLDING_ATTACHMENTS = frozenset({"agent_listing_delta", "skill_listing", "mcp_instructions_delta"})
_COMMAND_ARGS = re.compile(r"<command-args>\s*\S.*?</command-args>", re.DOTALL)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _gemini_message(message: Any) -> bool:
    return isinstance(message, dict) and "parts" in message and "content" not in message


def _is_tool_results(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _first_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                return str(block["text"])
    return ""


def _attachment_kind(attachment: Any) -> str | None:
    """Hook output (LCM's restored context among it) and the listings Claude Code injects; other attachments
    (files the user mentioned...) are native records without a kind."""
    kind = attachment.get("type") if isinstance(attachment, dict) else None
    if not isinstance(kind, str):
        return None
    if kind.startswith("hook_"):
        content = attachment.get("content")
        texts = [t for t in (content if isinstance(content, list) else [content, attachment.get("stdout")])
                 if isinstance(t, str)]
        return LCM_CONTEXT if any(is_lcm_context(t) for t in texts) else CLIENT_META
    return AGENT_SCAFFOLDING if kind in SCAFFOLDING_ATTACHMENTS else None


def _meta_kind(record: dict[str, Any], record_type: Any, message_obj: Any) -> str | None:
    """Why a record that looks like a turn is not conversation (``None``: it is, or is no turn)."""
    if record_type == "system":
        return CLIENT_META  # compact boundaries, local-command output, hook output, turn durations...
    if record_type == "attachment":
        return _attachment_kind(record.get("attachment"))
    if record_type not in ("user", "assistant"):
        return None
    if record.get("isCompactSummary") is True:
        return COMPACT_SUMMARY
    text = _first_text(message_obj.get("content") if isinstance(message_obj, dict) else None).lstrip()
    if text.startswith(LOCAL_COMMAND_TAGS):  # isMeta caveats among them; an isMeta expanded prompt is conversation
        return CLIENT_META
    if text.startswith(COMMAND_TAGS) and not _COMMAND_ARGS.search(text):
        return CLIENT_META
    if is_lcm_context(text):
        return LCM_CONTEXT
    return None


class ClaudeCodeFormat:
    """Maps Claude Code session records to LCM messages and parts."""

    identity = IDENTITY
    provider = "claude"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """``$CLAUDE_CONFIG_DIR/projects`` when set, else ``$HOME/.claude/projects`` (may not exist)."""
        config_dir = env.get("CLAUDE_CONFIG_DIR")
        if config_dir:
            return [Path(config_dir).expanduser() / "projects"]
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return [home / ".claude" / "projects"]

    def discover(self, root: Path) -> Iterator[Path]:
        """Every ``*.jsonl`` file under ``root`` (sub-agent files included), sorted by relative path."""
        if not root.is_dir():
            return
        files = (p for p in root.rglob("*.jsonl") if p.is_file())
        yield from sorted(files, key=lambda p: p.relative_to(root).as_posix())

    def sniff(self, head: Sequence[Any]) -> bool:
        """Claude records are objects with a known ``type``, an identity key and no Codex ``payload``; a
        ``message`` holds ``content``, never Gemini API ``parts`` (what Gemini CLI forks record)."""
        records = [r for r in head if isinstance(r, dict)]
        if not records or any("payload" in r or _gemini_message(r.get("message")) for r in records):
            return False
        return any(r.get("type") in KNOWN_TYPES and any(key in r for key in IDENTITY_KEYS) for r in records)

    def map_record(self, record: Any) -> MappedRecord:
        """One parsed record -> its session identity, metadata and (for main-thread turns) a message."""
        if not isinstance(record, dict):
            return MappedRecord()
        get = record.get
        record_type = get("type")
        message_obj = get("message")
        metadata = string_fields(record, RECORD_FIELDS)
        if isinstance(message_obj, dict):
            metadata.update(string_fields(message_obj, MESSAGE_FIELDS))
        timestamp = parse_timestamp(get("timestamp"))
        subagent = None
        if get("isSidechain") is True:
            subagent = SubagentRef(_str(get("agentId")), _str(get("uuid")), _str(get("parentUuid")))
        kind = _meta_kind(record, record_type, message_obj)
        return MappedRecord(
            session_id=_str(get("sessionId")),
            cwd=_str(get("cwd")),
            timestamp=timestamp,
            message=None if kind else self._message(record, record_type, message_obj, timestamp),
            metadata=metadata,
            subagent=subagent,
            kind=kind,
        )

    def _message(self, record: dict[str, Any], record_type: Any, message_obj: Any,
                 timestamp: datetime | None) -> NewMessage | None:
        role = MESSAGE_ROLES.get(record_type) if isinstance(record_type, str) else None
        if role is None:
            return None
        if role is Role.SYSTEM:
            content: Any = record.get("content")
            if content is None:  # turn_duration, api_error...: events, not messages
                return None
        elif isinstance(message_obj, dict) and "content" in message_obj:
            content = message_obj["content"]
        else:
            return None
        if role is Role.USER and _is_tool_results(content):
            role = Role.TOOL
        parts, text = map_content(content)
        if role is Role.USER and record.get("isMeta") is True:  # an expanded slash command: the client's text
            parts = [replace(p, metadata=CLIENT_AUTHORED) if p.kind is PartKind.TEXT else p for p in parts]
        return NewMessage(role=role, content=text, token_count=estimate_tokens(text), created_at=timestamp, parts=parts)

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES

    # --- sub-agents (``SubagentFormat``) -------------------------------------------

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        """``agent-<id>.jsonl`` is the run ``<id>``; its type and call (``agentType``, ``toolUseId``) come from
        ``agent-<id>.meta.json`` beside it when that exists."""
        found = AGENT_FILE.fullmatch(path.name)
        if found is None:
            return None
        meta = _meta(path.with_name(f"agent-{found.group(1)}.meta.json"))
        return SpawnedBy("", found.group(1), _str(meta.get("agentType")), tool_call_id=_str(meta.get("toolUseId")))

    def companions(self, path: Path) -> list[Path]:
        """``<session>/subagents/**/agent-*.jsonl`` next to ``<session>.jsonl``, sorted."""
        folder = path.with_suffix("") / "subagents"
        if AGENT_FILE.fullmatch(path.name) or not folder.is_dir():
            return []
        return sorted(p for p in folder.rglob("agent-*.jsonl") if p.is_file())

    def spawn(self, part: PartView) -> Spawn | None:
        """A ``Task``/``Agent`` call (matched by its prompt) or a tool result naming ``agentId: <id>``."""
        if part.tool_call_id is None or part.text is None:
            return None
        if part.kind is PartKind.TOOL_CALL and part.tool_name in SPAWN_TOOLS:
            try:
                arguments = json.loads(part.text)
            except ValueError:
                return None
            prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
            if not isinstance(prompt, str):
                return None
            return Spawn(part.tool_call_id, prompt_sha256=prompt_sha256(prompt),
                         agent_type=_str(arguments.get("subagent_type")))
        if part.kind is PartKind.TOOL_RESULT and "agentId: " in part.text:  # a substring test is ~50x a search
            named = AGENT_IN_RESULT.search(part.text)
            if named is not None:
                return Spawn(part.tool_call_id, agent_id=named.group(1))
        return None


def _meta(path: Path) -> dict[str, Any]:
    """A sub-agent's meta file (``{"agentType", "description", "toolUseId", "spawnDepth"}``); absent,
    unreadable or odd: empty."""
    try:
        with path.open("rb") as handle:
            data = json.loads(handle.read(MAX_META_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


FORMAT = ClaudeCodeFormat()
