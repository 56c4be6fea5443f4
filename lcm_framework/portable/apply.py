"""Apply one checked, re-scrubbed portable conversation record: its large files, then its rows in one
transaction; when the transaction fails, the files this call created are removed again."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compaction.largefiles import LargeFileStore
from ..storage.models import (
    Checkpoint,
    FormatIdentity,
    LargeFile,
    NativeRecordInput,
    NewMessage,
    NewPart,
    NewSummary,
    PartKind,
    Role,
    SubagentLink,
    SummaryKind,
)
from .records import required_when, when

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage, Repositories


def apply_conversation(storage: ProjectStorage, home: Path, record: dict[str, Any]) -> None:
    """Store ``record`` in ``storage``: all of it, or (on any error) none of it."""
    files = LargeFileStore(storage, home, threshold_tokens=0)
    created: list[Path] = []
    try:
        for f in record["files"]:
            path = files.write_once(f["file_id"], f["file_name"], f["content"])
            if path is not None:
                created.append(path)
        storage.transaction(lambda repos: _rows(repos, record))
    except BaseException:
        for path in created:
            path.unlink(missing_ok=True)
        raise


def _rows(repos: Repositories, record: dict[str, Any]) -> None:
    conversation = repos.conversations.create_conversation(record["session_id"], title=record["title"])
    cid = conversation.conversation_id
    stored = repos.conversations.insert_messages(cid, [_message(m) for m in record["messages"]])
    id_of = {m.seq: m.message_id for m in stored}
    for f in record["files"]:
        repos.large_files.create_file(LargeFile(
            f["file_id"], cid, id_of.get(f["message_seq"]) if f["message_seq"] is not None else None, f["file_name"],
            f["mime_type"], f["byte_size"], f["token_count"], f["sha256"], f["exploration_summary"],
            required_when(f["created_at"])))
    for s in record["summaries"]:
        repos.summaries.create_summary(NewSummary(
            s["summary_id"], cid, SummaryKind(s["kind"]), s["depth"], s["content"], s["token_count"],
            when(s["earliest_at"]), when(s["latest_at"]), s["descendant_count"],
            [id_of[q] for q in s["source_seqs"]], s["parent_ids"], s["file_ids"]))
    _context(repos, cid, record["context"], id_of)
    _native(repos, record, id_of)
    if "subagent" in record:
        _link(repos, cid, record["subagent"])


def _link(repos: Repositories, cid: int, link: dict[str, Any]) -> None:
    """Link a sub-agent run to the session that started it, and to the call's message when that is stored."""
    parent_conversation = parent_message = None
    if link["parent"] is not None:
        session, segment, seq = link["parent"]
        segments = repos.conversations.find_conversations(session)
        if segment < len(segments):
            parent_conversation = segments[segment].conversation_id
            found = [m for m in repos.conversations.list_messages(parent_conversation) if m.seq == seq]
            parent_message = found[0].message_id if found else None
    repos.conversations.link_subagent(SubagentLink(
        cid, link["parent_session_id"], link["agent_id"], link["agent_type"], link["prompt_sha256"],
        parent_conversation if parent_message is not None else None, parent_message, link["tool_call_id"]))


def _message(m: dict[str, Any]) -> NewMessage:
    parts = tuple(NewPart(PartKind(p["kind"]), p["text"], p["tool_call_id"], p["tool_name"], p["is_error"],
                          p["raw_json"], p["metadata"]) for p in m["parts"])
    return NewMessage(Role(m["role"]), m["content"], m["token_count"], when(m["created_at"]), m["seq"], parts)


def _context(repos: Repositories, cid: int, items: list[list[Any]], id_of: dict[int, int]) -> None:
    """Rebuild the context list in order: a summary item takes the place of a stand-in message item."""
    stand_in = next(iter(id_of.values()), None)
    for ordinal, (kind, ref) in enumerate(items):
        if kind == "message":
            repos.context.append_messages(cid, [id_of[ref]])
        elif stand_in is not None:
            repos.context.append_messages(cid, [stand_in])
            repos.context.replace_range(cid, ordinal, ordinal, ref)


def _native(repos: Repositories, record: dict[str, Any], id_of: dict[int, int]) -> None:
    natives = record["native"]
    if not natives:
        return
    inputs = [NativeRecordInput(
        n["ingest_key"], FormatIdentity(*n["format"]), n["native_session_id"], n["source_locator"],
        n["source_ordinal"], n["payload_json"], n["content_sha256"], n["scrubber_version"],
        required_when(n["observed_at"]),
        id_of.get(n["message_seq"]) if n["message_seq"] is not None else None) for n in natives]
    key = f"portable:{record['session_id']}:{record['segment']}"
    expected = repos.native_transcripts.get_checkpoint(key)
    repos.native_transcripts.ingest_batch(inputs, source_key=key, expected=expected, new_checkpoint=Checkpoint(
        key, 0, 0, "", inputs[-1].scrubber_version, max(i.source_ordinal for i in inputs), len(inputs), 0, 0))
