"""Generated transcripts and a full, id-free snapshot of what an import stored."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lcm_framework.app import App
from lcm_framework.config import load_config
from lcm_framework.ingest import quarantine_path
from lcm_framework.ingest.quarantine import QuarantineStore
from lcm_framework.kernel.plugins import build_plugins


def make_app(project: Path, *, home: Path | None = None, **overrides: str) -> App:
    """A real App on ``project`` (created); ``home`` replaces ``$LCM_HOME`` for a second, separate store."""
    project.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ) | ({"LCM_HOME": str(home)} if home is not None else {})
    return App(load_config(project=project, env=env, overrides=overrides,
                           plugins=build_plugins(env)), build_plugins(env))


def _ts(i: int) -> str:
    return f"2025-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def claude_records(session_id: str, cwd: str, turns: int, *, text: str = "", start: int = 0) -> list[dict[str, Any]]:
    """A main-thread Claude Code session: question, tool call, tool result, answer per turn."""
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
            "version": "2.0.28", "gitBranch": "main"}
    out: list[dict[str, Any]] = []
    parent = None

    def add(record: dict[str, Any]) -> None:
        nonlocal parent
        uid = str(uuid.UUID(int=len(out) + 1 + start * 10 + hash(session_id) % 10**9))
        out.append({**base, "parentUuid": parent, "uuid": uid, "timestamp": _ts(len(out) + start), **record})
        parent = uid

    for i in range(start, start + turns):
        tool_id = f"toolu_{session_id[:8]}_{i}"
        add({"type": "user", "message": {"role": "user", "content": f"question {i} {text}"}})
        add({"type": "assistant", "message": {"role": "assistant", "model": "claude-sonnet-4", "id": f"msg_{i}",
             "content": [{"type": "text", "text": f"I will look {i}"},
                         {"type": "tool_use", "id": tool_id, "name": "Bash",
                          "input": {"command": f"ls -la dir{i} {text}"}}]}})
        add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": f"file{i}.txt {text}", "is_error": False}]}})
        add({"type": "assistant", "message": {"role": "assistant", "model": "claude-sonnet-4", "id": f"msg_{i}b",
             "content": [{"type": "text", "text": f"answer {i} {text}"}]}})
    return out


def codex_records(session_id: str, cwd: str, turns: int, *, text: str = "") -> list[dict[str, Any]]:
    """A Codex rollout: session_meta, turn context, user, reasoning, function call/output, answer."""
    out: list[dict[str, Any]] = [{"timestamp": _ts(0), "type": "session_meta", "payload": {
        "id": session_id, "timestamp": _ts(0), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.46.0",
        "instructions": None, "source": "cli", "model_provider": "openai",
        "git": {"commit_hash": "0" * 40, "branch": "main", "repository_url": "https://example.com/r.git"}}}]

    def item(payload: dict[str, Any]) -> None:
        out.append({"timestamp": _ts(len(out)), "type": "response_item", "payload": payload})

    for i in range(turns):
        out.append({"timestamp": _ts(len(out)), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5"}})
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"task {i} {text}"}]})
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": f"plan {i}"}], "content": None,
              "encrypted_content": "opaque"})
        item({"type": "function_call", "name": "shell", "call_id": f"call_{i}",
              "arguments": json.dumps({"command": ["ls", f"dir{i}", text]})})
        item({"type": "function_call_output", "call_id": f"call_{i}", "output": f"out {i} {text}"})
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"done {i}"}]})
        out.append({"timestamp": _ts(len(out)), "type": "event_msg",
                    "payload": {"type": "agent_message", "message": f"done {i}"}})
    return out


def write_jsonl(path: Path, records: Iterable[Any], mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode, encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def snapshot(app: App, project_root: Path | str, sessions: Iterable[str] = (),
             clients: Iterable[str] = ("claude-code", "codex")) -> dict[str, Any]:
    """Everything stored for a project, read through the repositories, with generated ids and clock times
    replaced by natural keys (session, seq, locator, ordinal). ``sessions``: native sessions to include
    besides those with conversations."""
    ref = app.project_ref(project_root)
    with app.project(project_root) as st:
        convs = st.conversations.list_conversations()
        msg_key: dict[int, tuple[str, int]] = {}
        conversations = []
        locators: set[str] = set()
        for conv in convs:
            msgs = st.conversations.list_messages(conv.conversation_id)
            parts = st.conversations.list_parts([m.message_id for m in msgs])
            for m in msgs:
                msg_key[m.message_id] = (conv.session_id, m.seq)
            conversations.append({
                "session": conv.session_id, "title": conv.title,
                "messages": [(m.seq, m.role.value, m.content, m.token_count, m.created_at.isoformat(),
                              [(p.ordinal, p.kind.value, p.text, p.tool_call_id, p.tool_name, p.is_error,
                                p.raw_json, p.metadata) for p in parts.get(m.message_id, [])]) for m in msgs],
                "context": [(i.ordinal, i.kind.value, msg_key.get(i.message_id or -1), i.summary_id, i.token_count)
                            for i in st.context.list_items(conv.conversation_id)],
            })
        natives = []
        seen: set[int] = set()
        for session in sorted({c.session_id for c in convs} | set(sessions)):
            for r in st.native_transcripts.list_by_native_session(session):
                if r.transcript_id in seen:
                    continue
                seen.add(r.transcript_id)
                locators.add(r.source_locator)
                natives.append((r.source_locator, r.source_ordinal, r.ingest_key, r.format.identifier,
                                r.native_session_id, r.payload_json, r.content_sha256, r.scrubber_version,
                                msg_key.get(r.message_id) if r.message_id is not None else None))
        checkpoints = {}
        for client in clients:
            for loc in sorted(locators):
                cp = st.native_transcripts.get_checkpoint(f"{client}:{loc}")
                if cp is not None:
                    checkpoints[cp.source_key] = cp
        counts = st.redaction_admin.get_counts()
    quarantine = {}
    for client in clients:
        if quarantine_path(ref.project_id, client, app.config.home).exists():
            with QuarantineStore(ref.project_id, client, app.config.home) as q:
                quarantine[client] = [(e.locator, e.ordinal, e.reason, e.sha256) for e in q.list()]
    return {"conversations": sorted(conversations, key=lambda c: c["session"]), "native": sorted(natives),
            "checkpoints": checkpoints, "redactions": counts, "quarantine": quarantine}

