"""Promotion: durable insights of leaf summaries (and their source messages) become memories.

With a model summarizer configured the ``promote`` prompt template asks it for JSON lines of insights;
otherwise (extractive or truncation summarizers) the deterministic extractor of ``extract`` runs. Every
memory cites the summary and the messages it came from; promoting the same summary again changes nothing,
the same insight from another summary raises the existing memory's confidence once (``store.remember``), and a
forgotten memory's text is never promoted again. Only the conversation's own words are read (``own_words``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..storage.lineage import Lineage
from ..storage.models import Message
from .extract import Candidate, extract, own_words, tags_of
from .store import remember, was_forgotten

if TYPE_CHECKING:
    from ..app import App
    from ..compaction.settings import CompactionReport
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Summary

PROMOTED_CONFIDENCE = 0.4
MAX_ITEMS = 5
SEGMENT_CHARS = 24_000
OFFLINE_SUMMARIZERS = frozenset({"extractive", "truncate"})
KINDS = frozenset({"decision", "root_cause", "convention", "command", "constraint"})


@dataclass(slots=True)
class PromotionReport:
    summaries: int = 0
    created: list[int] = field(default_factory=list)
    reinforced: list[int] = field(default_factory=list)
    extractor: str = "offline"
    failures: list[str] = field(default_factory=list)


def promote(app: App, storage: ProjectStorage, conversation_ids: Sequence[int], *,
            since: datetime | None = None) -> PromotionReport:
    """Promote the leaf summaries of these conversations (only those created at or after ``since``)."""
    from ..scrub.gate import project_scrubber

    scrubber = project_scrubber(app)
    model = app.summarizer_name not in OFFLINE_SUMMARIZERS
    report = PromotionReport(extractor="model" if model else "offline")
    for conversation_id in conversation_ids:
        subagent = storage.conversations.get_subagent_link(conversation_id) is not None
        for summary in storage.summaries.list_summaries(conversation_id, depth=0):
            if since is not None and summary.created_at < since:
                continue
            report.summaries += 1
            messages = storage.conversations.get_messages(storage.summaries.source_message_ids(summary.summary_id))
            parts = storage.conversations.list_parts([m.message_id for m in messages]) if messages else {}
            try:
                candidates = (_model(app, summary, [m for m in messages if own_words(
                    m, parts.get(m.message_id, ()), subagent=subagent)]) if model
                              else extract(messages, parts, subagent=subagent))
            except Exception as exc:  # a provider failure must not lose the offline insights
                report.failures.append(f"{summary.summary_id}: {type(exc).__name__}: {exc}"[:300])
                candidates = extract(messages, parts, subagent=subagent)
            for candidate in candidates:
                if was_forgotten(storage, scrubber.scrub_text(candidate.text)[0]):  # as it would be stored
                    continue
                stored = remember(storage, candidate.text, scrubber=scrubber, tags=candidate.tags,
                                  confidence=PROMOTED_CONFIDENCE,
                                  lineage=Lineage("promotion", (summary.summary_id,), candidate.message_ids,
                                                  candidate.kind))
                if stored.created:
                    report.created.append(stored.memory.memory_id)
                elif not stored.unchanged and stored.memory.memory_id not in report.reinforced:
                    report.reinforced.append(stored.memory.memory_id)
    return report


def _segment(messages: Sequence[Message]) -> str:
    text = "\n".join(f"{m.role.value}: {m.content}" for m in messages)
    return text[:SEGMENT_CHARS]


def _model(app: App, summary: Summary, messages: Sequence[Message]) -> list[Candidate]:
    from ..summarize.contracts import Level, SummaryRequest
    from ..summarize.prompts import PromptRenderer

    renderer = PromptRenderer(app.config, app.plugins)
    segment = _segment(messages)
    variables = {"summary": summary.content, "segment": segment, "max_items": MAX_ITEMS}
    answer = app.summarizer().summarize(SummaryRequest(
        system_prompt=renderer.render("system", **variables),
        prompt=renderer.render("promote", **variables), segment=segment, target_tokens=400, level=Level.NORMAL,
        depth=0, temperature=0.0))
    return parse_answer(answer, tuple(m.message_id for m in messages))


def parse_answer(answer: str, message_ids: tuple[int, ...]) -> list[Candidate]:
    """The well-formed insight lines of a model's answer; anything else is ignored."""
    found = []
    for line in answer.splitlines():
        try:
            item = json.loads(line.strip())
        except json.JSONDecodeError:
            continue
        if not isinstance(item, dict) or item.get("kind") not in KINDS or not isinstance(item.get("text"), str):
            continue
        text = " ".join(item["text"].split())
        tags = [t for t in item.get("tags") or [] if isinstance(t, str) and t] if isinstance(item.get("tags"),
                                                                                           list) else []
        if text:
            found.append(Candidate(text, item["kind"], tuple(dict.fromkeys([*tags, *tags_of(text, item["kind"])])),
                                   message_ids))
    return found[:MAX_ITEMS]


def promote_project(app: App, storage: ProjectStorage, *, since: datetime | None = None) -> PromotionReport:
    return promote(app, storage, [c.conversation_id for c in storage.conversations.list_conversations()],
                   since=since)


def after_compaction(app: App, storage: ProjectStorage, reports: Sequence[CompactionReport],
                     since: datetime) -> PromotionReport | None:
    """Promote the summaries a compaction just created (``memory.promote_after_compaction``); None when it
    created none. Best effort: a failure is reported, never raised (the compaction itself succeeded)."""
    created = [r.conversation_id for r in reports if r.action_taken and r.summaries_created and not r.dry_run]
    if not created or not app.config.get("memory.promote_after_compaction"):
        return None
    try:
        return promote(app, storage, created, since=since)
    except Exception as exc:
        return PromotionReport(failures=[f"{type(exc).__name__}: {exc}"[:300]])
