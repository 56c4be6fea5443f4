"""The ``codex/codex-jsonl/v1`` transcript format (Codex CLI rollouts).

Codex appends one envelope per line, ``{"timestamp", "type", "payload"}``, to
``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (archived ones
move to ``$CODEX_HOME/archived_sessions/``; ``CODEX_HOME`` defaults to
``~/.codex``). The first line is ``session_meta``; only it names the session
and its cwd, so the importer carries its ``session_id`` forward to the
records after it. ``response_item`` payloads become messages;
``event_msg``, ``turn_context``, ``compacted`` and unknown envelopes stay
native-only records. A sub-agent's rollout says so in its ``session_meta``
(``source.subagent.thread_spawn.parent_thread_id``); the parent's
``spawn_agent`` call returns ``{"agent_id": <the sub-agent's thread id>}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.formats import (
    AGENT_SCAFFOLDING,
    LCM_CONTEXT,
    FormatIdentity,
    MappedRecord,
    PartKind,
    PartView,
    Spawn,
    SpawnedBy,
    is_lcm_context,
    parse_timestamp,
    string_fields,
)

from .items import map_response_item
from .structure import STRUCTURAL_SAMPLES

IDENTITY = FormatIdentity("codex", "codex-jsonl", "v1")
SESSION_DIRS = ("archived_sessions", "sessions")
ROLLOUT_GLOB = "rollout-*.jsonl"
SESSION_FIELDS = {
    "id": "sessionId",
    "timestamp": "sessionStartedAt",
    "originator": "originator",
    "cli_version": "cliVersion",
    "model_provider": "modelProvider",
    "source": "source",
    "forked_from_id": "forkedFromId",
}
GIT_FIELDS = {"commit_hash": "gitCommit", "branch": "gitBranch", "repository_url": "gitRepositoryUrl"}
PAYLOAD_FIELDS = {"type": "payloadType", "role": "role", "call_id": "callId", "name": "name", "status": "status"}
TURN_FIELDS = {"cwd": "cwd", "model": "model", "effort": "effort", "approval_policy": "approvalPolicy"}
# User-role messages Codex itself writes around the conversation (seen in Codex 0.171.0 rollouts).
SCAFFOLDING_TAGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<skills_instructions>",
                    "<permissions instructions>", "<collaboration_mode>", "<turn_aborted>")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _is_envelope(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("type"), str) and "payload" in record


def _meta_kind(payload: dict[str, Any]) -> str | None:
    """Why a ``message`` payload is not conversation: every developer/system message is Codex's instructions
    (or LCM's restored context, which Codex writes back as one); some user messages are Codex's too."""
    if payload.get("type") != "message":
        return None
    items = payload.get("content")
    text = "\n".join(i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)) \
        if isinstance(items, list) else ""
    if is_lcm_context(text.lstrip()):
        return LCM_CONTEXT
    if payload.get("role") in ("developer", "system") or text.lstrip().startswith(SCAFFOLDING_TAGS):
        return AGENT_SCAFFOLDING
    return None


class CodexFormat:
    """Maps Codex rollout envelopes to LCM messages and parts."""

    identity = IDENTITY
    provider = "codex"

    def default_roots(self, env: Mapping[str, str]) -> list[Path]:
        """``$CODEX_HOME`` when set, else ``$HOME/.codex`` (may not exist)."""
        codex_home = env.get("CODEX_HOME")
        if codex_home:
            return [Path(codex_home).expanduser()]
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
        return [home / ".codex"]

    def discover(self, root: Path) -> Iterator[Path]:
        """Rollouts under ``root/archived_sessions`` and ``root/sessions`` (or under ``root`` itself if it
        has neither), sorted by path relative to ``root``."""
        if not root.is_dir():
            return
        bases = [root / name for name in SESSION_DIRS if (root / name).is_dir()] or [root]
        files = {p for base in bases for p in base.rglob(ROLLOUT_GLOB) if p.is_file()}
        yield from sorted(files, key=lambda p: p.relative_to(root).as_posix())

    def sniff(self, head: Sequence[Any]) -> bool:
        """Every object is an envelope and the first one is ``session_meta`` with an id."""
        records = [r for r in head if isinstance(r, dict)]
        if not records or not all(_is_envelope(r) for r in records):
            return False
        first = records[0]
        return first["type"] == "session_meta" and isinstance(first["payload"], dict) and "id" in first["payload"]

    def map_record(self, record: Any) -> MappedRecord:
        """One envelope -> session identity (``session_meta`` only), metadata and maybe a message."""
        if not _is_envelope(record):
            return MappedRecord()
        kind, payload = record["type"], record["payload"]
        timestamp = parse_timestamp(record.get("timestamp"))
        metadata = {"type": kind}
        if not isinstance(payload, dict):
            return MappedRecord(timestamp=timestamp, metadata=metadata)
        if kind == "session_meta":
            metadata.update(string_fields(payload, SESSION_FIELDS))
            git = payload.get("git")
            if isinstance(git, dict):
                metadata.update(string_fields(git, GIT_FIELDS))
            session_id = _str(payload.get("id"))
            return MappedRecord(
                session_id=session_id,
                cwd=_str(payload.get("cwd")),
                timestamp=timestamp,
                metadata=metadata,
                spawned_by=_spawned_by(payload.get("source"), session_id),
            )
        if kind == "turn_context":
            metadata.update(string_fields(payload, TURN_FIELDS))
            return MappedRecord(timestamp=timestamp, metadata=metadata)
        metadata.update(string_fields(payload, PAYLOAD_FIELDS))
        meta_kind = _meta_kind(payload) if kind == "response_item" else None
        message = map_response_item(payload, timestamp) if kind == "response_item" and not meta_kind else None
        return MappedRecord(timestamp=timestamp, message=message, metadata=metadata, kind=meta_kind)

    def structural_samples(self) -> Sequence[Any]:
        return STRUCTURAL_SAMPLES

    # --- sub-agents (``SubagentFormat``) -------------------------------------------

    def source_subagent(self, path: Path) -> SpawnedBy | None:
        """Codex names sub-agent runs in their ``session_meta``, never in the file's location."""
        return None

    def companions(self, path: Path) -> list[Path]:
        """A sub-agent's rollout is a session file of its own, found by the usual discovery."""
        return []

    def spawn(self, part: PartView) -> Spawn | None:
        """A tool output ``{"agent_id": ...}`` (what ``spawn_agent`` returns) names the run it started."""
        if part.kind is not PartKind.TOOL_RESULT or part.tool_call_id is None or not part.text:
            return None
        try:
            output = json.loads(part.text)
        except ValueError:
            return None
        agent_id = _str(output.get("agent_id")) if isinstance(output, dict) else None
        return Spawn(part.tool_call_id, agent_id=agent_id) if agent_id else None


def _spawned_by(source: Any, session_id: str | None) -> SpawnedBy | None:
    """``{"subagent": {"thread_spawn": {"parent_thread_id", "agent_role"...}}}``: a sub-agent's rollout."""
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = _str(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None
    if parent is None or session_id is None or not isinstance(spawn, dict):
        return None
    return SpawnedBy(parent, session_id, _str(spawn.get("agent_role")), own_session=True)


FORMAT = CodexFormat()
