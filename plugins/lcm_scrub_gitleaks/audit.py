"""Scan what a project already stores with today's rules: messages, parts, summaries, memories, native records.

Everything is read through the storage contracts (conversations, summaries,
promoted memory, native transcripts), page by page, so memory stays bounded
by one page. A finding names the rule, the kind of record, its id, the field
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


@dataclass(frozen=True, slots=True)
class AuditFinding:
    rule_id: str
    kind: str
    """message, part, summary, memory or native."""
    record_id: str
    field: str
    line: int
    column: int


@dataclass
class AuditReport:
    findings: list[AuditFinding] = field(default_factory=list)
    scanned: Counter[str] = field(default_factory=Counter)
    """Records scanned per kind."""


def _texts(storage: ProjectStorage) -> Iterator[tuple[str, str, str, str | None]]:
    """(kind, record id, field, text) of every stored text field."""
    sessions: set[str] = set()
    for conversation in storage.conversations.list_conversations():
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
        if conversation.session_id not in sessions:
            sessions.add(conversation.session_id)
            for native in storage.native_transcripts.list_by_native_session(conversation.session_id):
                yield "native", str(native.transcript_id), "payload_json", native.payload_json
    for memory in storage.promoted_memory.list_memories(include_archived=True):
        yield "memory", str(memory.memory_id), "content", memory.content
        yield "memory", str(memory.memory_id), "metadata", memory.metadata


def audit_project(storage: ProjectStorage, scrubber: Scrubber) -> AuditReport:
    report = AuditReport()
    last: tuple[str, str] | None = None
    for kind, record_id, name, text in _texts(storage):
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
