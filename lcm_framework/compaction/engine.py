"""The compaction engine: leaf passes, condensation and the three modes of the spec.

Each pass reads what it needs and calls the summarizer outside any
transaction, renewing the lease. Summaries, their lineage and the context
replacements are then written in ONE transaction that first checks the lease
fence. Consecutive leaf passes of a sweep share one write (``pending.py``): with
a fast summarizer a whole sweep is written at once, which lets the context
replacements run last-first and shift only the rows after them; with an LLM at
most ~30 s of summarization is ever at risk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from ..errors import LcmError, PluginError, SummarizerUnavailableError
from ..storage.models import NewSummary, SummaryKind
from ..summarize.tokens import estimate_tokens
from .escalation import LadderSettings, Outcome, summarize_with_escalation, truncation
from .ids import summary_id
from .locking import CompactionBusy, LeaseKeeper, exclusive
from .pending import PendingWrites
from .plan import ContextModel, Span
from .segments import message_segment, summary_segment
from .settings import CompactionReport, CompactionSettings, Mode
from .subagents import runs_note

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Message, Summary
    from ..summarize.contracts import Summarizer
    from ..summarize.prompts import PromptRenderer
    from .largefiles import LargeFileStore

EXCERPT_CHARS = 24_000
OFFLINE_SUMMARIZER = "extractive"  # what a run falls back to when the configured summarizer is unavailable


@dataclass(frozen=True, slots=True)
class PassResult:
    summary_id: str
    depth: int
    tokens_before: int
    tokens_after: int

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after


class CompactionEngine:
    """Compacts the conversations of a project with the app's summarizer and prompts."""

    def __init__(
        self, app: App, *, summarizer: Summarizer | None = None, settings: CompactionSettings | None = None
    ) -> None:
        self.app = app
        self.settings = settings or CompactionSettings.from_config(app.config)
        self._summarizer = summarizer
        self._last_stamp = datetime.min.replace(tzinfo=UTC)
        self.fallback_reason: str | None = None
        """Why the configured summarizer was replaced by the offline one for the rest of this engine's runs."""

    @cached_property
    def summarizer(self) -> Summarizer:
        if self._summarizer is not None:
            return self._summarizer
        try:
            return self.app.summarizer()
        except LcmError:
            raise
        except Exception as exc:  # a broken third-party factory gets a typed, clear error
            provider = self.app.config.get("summarizer.provider")
            raise PluginError(f"summarizer {provider!r} failed to start: {type(exc).__name__}: {exc}") from exc

    def fall_back(self, exc: SummarizerUnavailableError) -> bool:
        """Use the offline summarizer from now on (True), unless it is the one failing or is not installed."""
        if self.summarizer.name == OFFLINE_SUMMARIZER or OFFLINE_SUMMARIZER not in self.app.plugins.summarizers():
            return False
        self.fallback_reason = f"{exc} - the offline {OFFLINE_SUMMARIZER} summarizer wrote the summaries instead"
        self.summarizer = self.app.summarizer(OFFLINE_SUMMARIZER)
        return True

    @cached_property
    def renderer(self) -> PromptRenderer:
        from ..summarize.prompts import PromptRenderer

        return PromptRenderer(self.app.config, self.app.plugins)

    def scrub(self, text: str) -> str:
        """``text`` scrubbed with the project's rules: what a model wrote is stored only through this."""
        from ..scrub.gate import scrub_text

        return scrub_text(self.app, text)

    def file_store(self, storage: ProjectStorage) -> LargeFileStore:
        from .largefiles import LargeFileStore

        return LargeFileStore(storage, self.app.config.home, self.settings.large_file_token_threshold, self.explore)

    def explore(self, content: str, name: str | None) -> str:
        """Exploration summary of a large file: a model's with the ``large_file`` prompt, else by kind.

        The offline summarizer would only pick lines of an excerpt, so it is not asked: the deterministic
        explorer (``lcm_framework.explore``) reads the whole file. A model's answer is scrubbed.
        """
        from ..explore import explore
        from ..summarize.contracts import Level, SummaryRequest

        if self.summarizer.name == OFFLINE_SUMMARIZER:
            return explore(content, name)

        excerpt = content[:EXCERPT_CHARS]
        variables = {
            "file_name": name or "pasted content",
            "mime_type": "text/plain",
            "byte_size": len(content.encode("utf-8")),
            "content_excerpt": excerpt,
            "segment": excerpt,
            "previous_context": "",
            "depth": 0,
            "target_tokens": 200,
            "level": Level.NORMAL,
        }
        request = SummaryRequest(
            system_prompt=self.renderer.render("system", **variables),
            prompt=self.renderer.render("large_file", **variables),
            segment=excerpt,
            target_tokens=200,
            level=Level.NORMAL,
            depth=0,
            temperature=self.settings.temperature,
        )
        return self.scrub(self.summarizer.summarize(request))

    def next_stamp(self) -> datetime:
        """A strictly increasing timestamp, so two summaries never share content and time."""
        now = datetime.now(UTC)
        if now <= self._last_stamp:
            now = self._last_stamp + timedelta(microseconds=1)
        self._last_stamp = now
        return now

    def compact(
        self,
        storage: ProjectStorage,
        conversation_id: int,
        mode: Mode = Mode.FULL,
        *,
        budget: int | None = None,
        dry_run: bool = False,
        wait_seconds: float = 30.0,
    ) -> CompactionReport:
        """Compact one conversation. Incremental mode is best effort and never raises."""
        conversation = storage.conversations.get_conversation(conversation_id)
        session = conversation.session_id if conversation else "?"
        report = CompactionReport(conversation_id, session, mode, dry_run=dry_run)
        if mode is Mode.INCREMENTAL:
            try:
                self._locked(storage, report, mode, budget, dry_run, 0.0)
            except CompactionBusy:
                report.busy = True
            except Exception as exc:  # best effort: ingestion must never fail because of compaction
                report.failures.append(f"{type(exc).__name__}: {exc}"[:300])
            return report
        try:
            self._locked(storage, report, mode, budget, dry_run, wait_seconds)
        except CompactionBusy:
            report.busy = True
        return report

    def _locked(
        self,
        storage: ProjectStorage,
        report: CompactionReport,
        mode: Mode,
        budget: int | None,
        dry_run: bool,
        wait_seconds: float,
    ) -> None:
        with exclusive(storage, report.conversation_id, wait_seconds=wait_seconds) as keeper:
            run = _Run(self, storage, report, None if dry_run else keeper)
            report.tokens_before = report.tokens_after = run.model.total_tokens
            if mode is Mode.INCREMENTAL:
                run.incremental()
            elif mode is Mode.UNTIL_UNDER:
                run.until_under(budget if budget is not None else int(self.app.config.get(
                    "compaction.context_budget_tokens")))
            else:
                run.full_sweep()
            if not dry_run:
                run.pending.flush()
            report.tokens_after = run.model.total_tokens


class _Run:
    """One compaction run of one conversation under the lease."""

    def __init__(
        self, engine: CompactionEngine, storage: ProjectStorage, report: CompactionReport,
        keeper: LeaseKeeper | None,
    ) -> None:
        self.engine = engine
        self.settings = engine.settings
        self.storage = storage
        self.report = report
        self.keeper = keeper
        self.dry_run = keeper is None
        self.cid = report.conversation_id
        self.contents: dict[str, Summary] = {}
        self.texts: dict[str, str] = {}
        self.pending = PendingWrites(storage, self.cid, keeper, report, self.settings.max_pending_passes,
                                     self.contents)
        started = time.perf_counter()
        items = storage.context.list_items(self.cid)
        summary_ids = [i.summary_id for i in items if i.summary_id is not None]
        for summary in storage.summaries.get_summaries(summary_ids):
            self.contents[summary.summary_id] = summary
        depths = {sid: s.depth for sid, s in self.contents.items()}
        self.model = ContextModel.from_items(items, depths)
        self.report.storage_seconds += time.perf_counter() - started
        self._files: LargeFileStore | None = None

    # --- modes ---------------------------------------------------------------

    def incremental(self) -> None:
        limits = self.settings.limits
        while self.model.raw_tokens_outside_tail(limits.fresh_tail_count) > limits.chunk_tokens:
            result = self.leaf_pass()
            if result is None or result.saved <= 0:
                break
        max_depth = self.settings.incremental_max_depth
        if max_depth != 0:
            self._condense_all(None if max_depth < 0 else max_depth - 1)

    def full_sweep(self) -> None:
        while (result := self.leaf_pass()) is not None:
            if result.saved <= 0:
                break
        self._condense_all(None)

    def until_under(self, budget: int) -> None:
        """Oldest-first passes (leaves, then condensation), stopping as soon as the context fits ``budget``."""
        for passes in (self.leaf_pass, lambda: self.condense_pass(None)):
            while self.model.total_tokens > budget:
                result = passes()
                if result is None or result.saved <= 0:
                    break

    def _condense_all(self, max_source_depth: int | None) -> None:
        while (result := self.condense_pass(max_source_depth)) is not None:
            if result.saved <= 0:
                break

    # --- passes --------------------------------------------------------------

    def leaf_pass(self) -> PassResult | None:
        span = self.model.leaf_span(self.settings.limits)
        if span is None:
            return None
        entries = self.model.span_entries(span)
        ids = [e.message_id for e in entries if e.message_id is not None]
        before = sum(e.tokens for e in entries)
        started = time.perf_counter()
        messages = self.storage.conversations.get_messages(ids)
        self.report.storage_seconds += time.perf_counter() - started
        texts, file_ids = self._model_facing(messages)
        segment = message_segment(messages, texts)
        times = [m.created_at for m in messages]
        new = NewSummary(
            summary_id="",
            conversation_id=self.cid,
            kind=SummaryKind.LEAF,
            depth=0,
            content="",
            token_count=0,
            earliest_at=min(times) if times else None,
            latest_at=max(times) if times else None,
            descendant_count=0,
            source_message_ids=ids,
            file_ids=file_ids,
        )
        note = "" if self.dry_run else runs_note(self.storage, messages)
        return self._finish(span, segment, new, before, self.settings.leaf_target_tokens, note)

    def condense_pass(self, max_source_depth: int | None) -> PassResult | None:
        if not self.dry_run:
            self.pending.flush()  # condensation reads its parents back from storage
        span = self.model.condensation_span(self.settings.limits, max_source_depth)
        if span is None:
            return None
        entries = self.model.span_entries(span)
        parent_ids = [e.summary_id for e in entries if e.summary_id is not None]
        before = sum(e.tokens for e in entries)
        parents = self._summaries(parent_ids)
        earliest = [p.earliest_at for p in parents if p.earliest_at]
        latest = [p.latest_at for p in parents if p.latest_at]
        files = tuple(dict.fromkeys(f for p in parents for f in p.file_ids))
        new = NewSummary(
            summary_id="",
            conversation_id=self.cid,
            kind=SummaryKind.CONDENSED,
            depth=span.depth,
            content="",
            token_count=0,
            earliest_at=min(earliest) if earliest else None,
            latest_at=max(latest) if latest else None,
            descendant_count=sum(1 + p.descendant_count for p in parents),
            parent_ids=parent_ids,
            file_ids=files,
        )
        return self._finish(span, summary_segment(parents), new, before, self.settings.condensed_target_tokens)

    # --- helpers -------------------------------------------------------------

    def _summaries(self, ids: list[str]) -> list[Summary]:
        missing = [sid for sid in ids if sid not in self.contents]
        if missing:
            started = time.perf_counter()
            for summary in self.storage.summaries.get_summaries(missing):
                self.contents[summary.summary_id] = summary
            self.report.storage_seconds += time.perf_counter() - started
        return [self.contents[sid] for sid in ids if sid in self.contents]

    def _model_facing(self, messages: list[Message]) -> tuple[list[str], tuple[str, ...]]:
        """Message texts with large blocks replaced by file references (each with its exploration)."""
        threshold = self.settings.large_file_token_threshold
        texts: list[str] = []
        file_ids: list[str] = []
        for message in messages:
            if self.dry_run or len(message.content) <= threshold * 4:
                texts.append(message.content)
                continue
            if self._files is None:
                self._files = self.engine.file_store(self.storage)
            # Scrubbed again with today's rules: the block becomes a file of its own, outside the message.
            rewritten = self._files.rewrite(self.cid, message.message_id, self.engine.scrub(message.content))
            texts.append(rewritten.text)
            file_ids.extend(rewritten.file_ids)
        return texts, tuple(dict.fromkeys(file_ids))

    def _previous_context(self, span: Span) -> str:
        previous = self.model.previous_summary_id(span)
        if previous is None:
            return ""
        if previous in self.texts:
            return self.texts[previous]
        found = self._summaries([previous])
        return found[0].content if found else ""

    def _finish(self, span: Span, segment: str, new: NewSummary, before: int, target: int,
                note: str = "") -> PassResult:
        """Summarize ``segment`` into ``new``; ``note`` (the sub-agent runs a leaf covers) is appended verbatim."""
        if self.dry_run:
            tokens = min(target, before)
            sid = f"dry_{self.report.passes}"
            self.model.replace(span, sid, tokens)
            self.report.note_pass(span.depth, "planned", ())
            return PassResult(sid, span.depth, before, tokens)
        started = time.perf_counter()
        previous = self._previous_context(span)
        settings = LadderSettings(target, self.settings.truncate_tokens, self.settings.temperature)
        while True:
            try:
                result = summarize_with_escalation(self.engine.summarizer, self.engine.renderer, segment=segment,
                                                   previous_context=previous, depth=span.depth, settings=settings)
                break
            except SummarizerUnavailableError as exc:
                if not self.engine.fall_back(exc):
                    result = truncation(segment, settings, self.engine.summarizer, str(exc))
                    break
                self.report.fallback = self.engine.fallback_reason
        self.report.summarizer_seconds += time.perf_counter() - started
        assert self.keeper is not None
        self.keeper.renew_if_due()
        text, tokens = result.text + note, result.output_tokens + (estimate_tokens(note) if note else 0)
        scrubbed = self.engine.scrub(text)  # a model may repeat or invent a secret: stored only scrubbed
        if scrubbed != text:
            text, tokens = scrubbed, self.engine.summarizer.count_tokens(scrubbed)
        if tokens >= before:
            # Even truncation cannot make this span smaller (it is already short): a summary would
            # grow the context, so nothing is written and the sweep stops here (no progress).
            self.report.skipped_no_gain += 1
            return PassResult("", span.depth, before, before)
        record = replace(new, summary_id=summary_id(text, self.engine.next_stamp()), content=text, token_count=tokens)
        start, end = self.model.ordinal(span.start), self.model.ordinal(span.end)
        self.texts[record.summary_id] = record.content
        self.model.replace(span, record.summary_id, record.token_count)
        self.pending.add(record, start, end, result.outcome.value, result.failures, time.perf_counter() - started)
        return PassResult(record.summary_id, span.depth, before, record.token_count)


__all__ = ["CompactionEngine", "Mode", "Outcome", "PassResult"]
