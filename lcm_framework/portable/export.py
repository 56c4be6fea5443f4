"""Write projects and memories as portable records (``lcm export``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..memory.scope import user_wide_root
from ..storage.lineage import parse
from . import records
from .records import iso

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Conversation, Memory, Message, NativeRecord, SubagentLink

MessageKey = tuple[str, int, int]


class Locator:
    """Portable names of one project's messages: ``[session_id, segment, seq]``."""

    def __init__(self, storage: ProjectStorage) -> None:
        self.storage = storage
        self.segments: dict[int, tuple[str, int]] = {}
        for conversation in storage.conversations.list_conversations():
            same = [c.conversation_id for c in storage.conversations.find_conversations(conversation.session_id)]
            self.segments[conversation.conversation_id] = (conversation.session_id,
                                                           same.index(conversation.conversation_id))

    def keys(self, message_ids: list[int]) -> list[list[Any]]:
        return [[*self.segments[m.conversation_id], m.seq] for m in self.storage.conversations.get_messages(message_ids)
                if m.conversation_id in self.segments]


def project_records(storage: ProjectStorage, home: Path, *, memories_only: bool, user_wide: bool,
                    root: str) -> Iterator[dict[str, Any]]:
    yield records.with_digest({"type": "project", "user_wide": user_wide, "root": None if user_wide else root})
    locator = Locator(storage)
    if not memories_only:
        for conversation in storage.conversations.list_conversations():
            yield conversation_record(storage, home, conversation, locator)
    prefix = "gmem_" if user_wide else "mem_"
    for memory in storage.promoted_memory.list_memories(include_archived=True):
        yield memory_record(storage, memory, f"{prefix}{memory.memory_id}", locator)


def memory_record(storage: ProjectStorage, memory: Memory, ref: str, locator: Locator) -> dict[str, Any]:
    lineage = parse(memory.metadata)
    stats = storage.recall.stats(ref)
    return records.with_digest({
        "type": "memory", "content": memory.content, "tags": list(memory.tags), "confidence": memory.confidence,
        "archived": memory.archived, "created_at": iso(memory.created_at), "updated_at": iso(memory.updated_at),
        "source_summary_id": memory.source_summary_id,
        "lineage": {"origin": lineage.origin, "kind": lineage.kind, "summaries": list(lineage.summaries),
                    "messages": locator.keys(list(lineage.messages)), "extra": lineage.extra},
        "recall": {"surfaced": stats.surfaced, "useful": stats.useful, "not_useful": stats.not_useful,
                   "last_surfaced_at": iso(stats.last_surfaced_at),
                   "surfacings": [[s.query, iso(s.surfaced_at)] for s in storage.recall.surfacings(ref)]},
    })


def conversation_record(storage: ProjectStorage, home: Path, conversation: Conversation,
                        locator: Locator) -> dict[str, Any]:
    from ..compaction.largefiles import LargeFileStore

    cid = conversation.conversation_id
    session_id, segment = locator.segments[cid]
    messages = storage.conversations.list_messages(cid)
    seq_of = {m.message_id: m.seq for m in messages}
    parts = storage.conversations.list_parts([m.message_id for m in messages]) if messages else {}
    files = LargeFileStore(storage, home, threshold_tokens=0)
    summaries = sorted(storage.summaries.list_summaries(cid), key=lambda s: s.depth)  # parents before children
    link = storage.conversations.get_subagent_link(cid)
    return records.with_digest({**({"subagent": _subagent(link, locator)} if link is not None else {}),
        "type": "conversation", "session_id": session_id, "segment": segment, "title": conversation.title,
        "messages": [_message(m, parts.get(m.message_id, [])) for m in messages],
        "files": [{"file_id": f.file_id, "message_seq": seq_of.get(f.message_id) if f.message_id else None,
                   "file_name": f.file_name, "mime_type": f.mime_type, "byte_size": f.byte_size,
                   "token_count": f.token_count, "sha256": f.sha256, "exploration_summary": f.exploration_summary,
                   "created_at": iso(f.created_at), "content": files.read(f)}
                  for f in storage.large_files.list_files(cid)],
        "summaries": [{"summary_id": s.summary_id, "kind": s.kind.value, "depth": s.depth, "content": s.content,
                       "token_count": s.token_count, "earliest_at": iso(s.earliest_at), "latest_at": iso(s.latest_at),
                       "descendant_count": s.descendant_count, "file_ids": list(s.file_ids),
                       "source_seqs": [seq_of[m] for m in storage.summaries.source_message_ids(s.summary_id)],
                       "parent_ids": storage.summaries.parent_ids(s.summary_id)} for s in summaries],
        "context": [["summary", i.summary_id] if i.summary_id else ["message", seq_of[i.message_id or 0]]
                    for i in storage.context.list_items(cid)],
        "native": [_native(r, seq_of) for r in _native_records(storage, session_id, segment, seq_of)],
    })


def _message(m: Message, parts: list[Any]) -> dict[str, Any]:
    return {"seq": m.seq, "role": m.role.value, "content": m.content, "token_count": m.token_count,
            "created_at": iso(m.created_at),
            "parts": [{"kind": p.kind.value, "text": p.text, "tool_call_id": p.tool_call_id,
                       "tool_name": p.tool_name, "is_error": p.is_error, "raw_json": p.raw_json,
                       "metadata": p.metadata} for p in parts]}


def _native_records(storage: ProjectStorage, session_id: str, segment: int,
                    seq_of: dict[int, int]) -> list[NativeRecord]:
    """The session's native records linked to this segment's messages; unlinked ones go with segment 0."""
    return [r for r in storage.native_transcripts.list_by_native_session(session_id)
            if (r.message_id in seq_of) or (r.message_id is None and segment == 0)]


def _subagent(link: SubagentLink, locator: Locator) -> dict[str, Any]:
    """A sub-agent run's link: the session that started it, and the message of the call when known (as its
    portable name ``[session_id, segment, seq]``)."""
    parent = locator.keys([link.parent_message_id]) if link.parent_message_id is not None else []
    return {"parent_session_id": link.parent_session_id, "agent_id": link.agent_id, "agent_type": link.agent_type,
            "prompt_sha256": link.prompt_sha256, "tool_call_id": link.tool_call_id,
            "parent": parent[0] if parent else None}


def _native(r: NativeRecord, seq_of: dict[int, int]) -> dict[str, Any]:
    return {"ingest_key": r.ingest_key, "format": [r.format.client_name, r.format.format_name, r.format.format_version],
            "native_session_id": r.native_session_id, "source_locator": r.source_locator,
            "source_ordinal": r.source_ordinal, "payload_json": r.payload_json, "content_sha256": r.content_sha256,
            "scrubber_version": r.scrubber_version, "observed_at": iso(r.observed_at),
            "message_seq": seq_of.get(r.message_id) if r.message_id is not None else None}


def write_stream(app: App, out: TextIO, *, all_projects: bool, memories_only: bool) -> int:
    """Write the header and every record; returns how many records were written."""
    import json

    out.write(json.dumps(records.header(backend=app.storage.name, created_at=datetime.now(UTC))) + "\n")
    refs = app.storage.list_projects() if all_projects else [app.project_ref()]
    special = str(user_wide_root(app).resolve())
    count = 0
    for ref in refs:
        storage = app.storage.open_existing_project(ref)  # an export only reads: it creates no project
        if storage is None:
            continue
        try:
            for record in project_records(storage, Path(app.config.home), memories_only=memories_only,
                                          user_wide=ref.root == special, root=ref.root):
                out.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
        finally:
            storage.close()
    return count
