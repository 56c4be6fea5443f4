"""Scan what a project already stores with today's rules: every stored text.

Conversation titles, messages, parts, summaries, large-file references, memories (content, tags,
lineage), the queries recorded with surfacings, native records. Everything is read through the
storage contracts (conversations, summaries, large files, promoted memory, recall, native transcripts),
page by page, so memory stays bounded by one page. A finding names the rule, the kind of record, its id, the field
and the line/column of the match; never the secret. As in ``scan`` (and gitleaks), a generic rule's
finding gives way to a specific rule's on the same line whose secret holds it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .scan import reported

if TYPE_CHECKING:
    from lcm_framework.plugin_api.scrub import Scrubber
    from lcm_framework.plugin_api.storage import ProjectStorage

PAGE = 500
MEMORY_PREFIXES = ("mem_", "gmem_")


@dataclass(frozen=True, slots=True)
class AuditFinding:
    rule_id: str
    kind: str
    """conversation, message, part, summary, large_file, memory, surfacing or native."""
    record_id: str
    field: str
    line: int
    column: int


@dataclass
class AuditReport:
    findings: list[AuditFinding] = field(default_factory=list)
    scanned: Counter[str] = field(default_factory=Counter)
    """Records scanned per kind."""


def stored_texts(storage: ProjectStorage) -> Iterator[tuple[str, str, str, str | None]]:
    """(kind, record id, field, text) of every stored text field."""
    sessions: set[str] = set()
    for conversation in storage.conversations.list_conversations():
        yield "conversation", str(conversation.conversation_id), "title", conversation.title
        after: int | None = None
        while page := storage.conversations.list_messages(conversation.conversation_id, after_seq=after, limit=PAGE):
            after = page[-1].seq
            for message in page:
                yield "message", str(message.message_id), "content", message.content
            parts = storage.conversations.list_parts([m.message_id for m in page])
            for part in (p for ps in parts.values() for p in ps):
                for name, text in (("text", part.text), ("raw_json", part.raw_json), ("metadata", part.metadata)):
                    yield "part", part.part_id, name, text
        for summary in storage.summaries.list_summaries(conversation.conversation_id):
            yield "summary", summary.summary_id, "content", summary.content
            yield from _surfacings(storage, summary.summary_id)
        for file in storage.large_files.list_files(conversation.conversation_id):
            yield "large_file", file.file_id, "file_name", file.file_name
            yield "large_file", file.file_id, "exploration_summary", file.exploration_summary
        if conversation.session_id not in sessions:
            sessions.add(conversation.session_id)
            for native in storage.native_transcripts.list_by_native_session(conversation.session_id):
                yield "native", str(native.transcript_id), "payload_json", native.payload_json
    for memory in storage.promoted_memory.list_memories(include_archived=True):
        yield "memory", str(memory.memory_id), "content", memory.content
        yield "memory", str(memory.memory_id), "tags", "\n".join(memory.tags)
        yield "memory", str(memory.memory_id), "metadata", memory.metadata
        for prefix in MEMORY_PREFIXES:  # a project's memories are mem_N, the user-wide store's gmem_N
            yield from _surfacings(storage, f"{prefix}{memory.memory_id}")


def _surfacings(storage: ProjectStorage, target_id: str) -> Iterator[tuple[str, str, str, str | None]]:
    """The query of every recorded surfacing of ``target_id`` (none for prompt recall, which stores no prompt)."""
    for n, surfacing in enumerate(storage.recall.surfacings(target_id), 1):
        yield "surfacing", f"{target_id}#{n}", "query", surfacing.query


def audit_project(storage: ProjectStorage, scrubber: Scrubber) -> AuditReport:
    report = AuditReport()
    last: tuple[str, str] | None = None
    for kind, record_id, name, text in stored_texts(storage):
        if (kind, record_id) != last:
            report.scanned[kind] += 1
            last = (kind, record_id)
        if not text:
            continue
        report.findings.extend(
            AuditFinding(f.rule_id, kind, record_id, name, f.line, f.column)
            for f in reported(scrubber.findings(text), text)
        )
    return report
