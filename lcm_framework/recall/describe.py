"""``describe``: one summary, message or large file with its metadata, lineage and full content."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compaction.ids import message_ref
from .refs import Ref, RefKind
from .subagents import describe_link, runs_started_by

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage


@dataclass(slots=True)
class Description:
    id: str
    kind: RefKind
    project_id: str
    conversation_id: int | None
    session_id: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    lineage: dict[str, list[str]] = field(default_factory=dict)
    content: str = ""


def describe(storage: ProjectStorage, ref: Ref, home: Path) -> Description | None:
    """The described object, or None when this project does not hold ``ref``."""
    if ref.kind is RefKind.SUMMARY:
        return _summary(storage, ref)
    if ref.kind is RefKind.MESSAGE:
        return _message(storage, ref)
    if ref.kind is RefKind.MEMORY:
        return _memory(storage, ref)
    return _file(storage, ref, home)


def _session(storage: ProjectStorage, conversation_id: int | None) -> str | None:
    if conversation_id is None:
        return None
    conversation = storage.conversations.get_conversation(conversation_id)
    return conversation.session_id if conversation else None


def _summary(storage: ProjectStorage, ref: Ref) -> Description | None:
    summary = storage.summaries.get_summary(ref.text)
    if summary is None:
        return None
    lineage = {
        "parents": storage.summaries.parent_ids(summary.summary_id),
        "children": storage.summaries.child_ids(summary.summary_id),
        "source_messages": [message_ref(m) for m in storage.summaries.source_message_ids(summary.summary_id)],
        "files": list(summary.file_ids),
    }
    metadata = {
        "kind": summary.kind.value,
        "depth": summary.depth,
        "token_count": summary.token_count,
        "descendant_count": summary.descendant_count,
        "earliest_at": summary.earliest_at,
        "latest_at": summary.latest_at,
        "created_at": summary.created_at,
    }
    _add_run(storage, summary.conversation_id, metadata)
    return Description(ref.text, ref.kind, storage.project_id, summary.conversation_id,
                       _session(storage, summary.conversation_id), metadata, lineage, summary.content)


def _add_run(storage: ProjectStorage, conversation_id: int, metadata: dict[str, Any]) -> None:
    """``metadata["subagent_of"]``: the session and tool call that started the run, for a sub-agent's item."""
    link = storage.conversations.get_subagent_link(conversation_id)
    if link is not None:
        metadata["subagent_of"] = describe_link(storage, link)


def _message(storage: ProjectStorage, ref: Ref) -> Description | None:
    found = storage.conversations.get_messages([ref.message_id])
    if not found:
        return None
    message = found[0]
    parts = storage.conversations.list_parts([message.message_id]).get(message.message_id, [])
    metadata: dict[str, Any] = {
        "role": message.role.value,
        "seq": message.seq,
        "token_count": message.token_count,
        "created_at": message.created_at,
        "parts": [p.kind.value + (f":{p.tool_name}" if p.tool_name else "") for p in parts],
    }
    lineage = {"summaries": storage.summaries.summaries_for_messages([message.message_id]).get(message.message_id, [])}
    started = runs_started_by(storage, [message])
    if started:
        runs = [describe_link(storage, link) for link in started]
        metadata["subagent_runs"] = runs
        lineage["subagent_sessions"] = [str(run["session_id"]) for run in runs]
    _add_run(storage, message.conversation_id, metadata)
    return Description(ref.text, ref.kind, storage.project_id, message.conversation_id,
                       _session(storage, message.conversation_id), metadata, lineage, message.content)


def _memory(storage: ProjectStorage, ref: Ref) -> Description | None:
    """A memory with the summaries and messages it was promoted from (``lcm expand`` those for the originals)."""
    from ..storage.lineage import parse

    memory = storage.promoted_memory.get_memory(ref.memory_id)
    if memory is None:
        return None
    lineage = parse(memory.metadata)
    stats = storage.recall.stats(ref.text)
    metadata = {
        "confidence": memory.confidence, "tags": list(memory.tags), "archived": memory.archived,
        "origin": lineage.origin, "insight": lineage.kind, "created_at": memory.created_at,
        "updated_at": memory.updated_at, "surfaced": stats.surfaced, "useful": stats.useful,
        "not_useful": stats.not_useful,
    }
    found = storage.summaries.get_summaries(list(lineage.summaries))
    conversation_id = found[0].conversation_id if found else None
    return Description(ref.text, ref.kind, storage.project_id, conversation_id, _session(storage, conversation_id),
                       metadata, {"summaries": list(lineage.summaries),
                                  "source_messages": [message_ref(m) for m in lineage.messages]}, memory.content)


def _file(storage: ProjectStorage, ref: Ref, home: Path) -> Description | None:
    from ..compaction.largefiles import LargeFileStore

    record = storage.large_files.get_file(ref.text)
    if record is None:
        return None
    store = LargeFileStore(storage, home, threshold_tokens=0)
    metadata = {
        "file_name": record.file_name,
        "mime_type": record.mime_type,
        "byte_size": record.byte_size,
        "token_count": record.token_count,
        "sha256": record.sha256,
        "created_at": record.created_at,
        "exploration_summary": record.exploration_summary,
        "path": str(store.path_for(record)),
    }
    lineage = {"message": [message_ref(record.message_id)] if record.message_id is not None else []}
    return Description(ref.text, ref.kind, storage.project_id, record.conversation_id,
                       _session(storage, record.conversation_id), metadata, lineage, store.read(record))
