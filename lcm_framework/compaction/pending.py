"""Summarized spans waiting for their write: consecutive passes share ONE fenced transaction.

A sweep's spans are written together until ``FLUSH_AFTER_SECONDS`` of summarizer time (or
``max_pending`` passes) have accumulated, so with an LLM at most ~30 s of summarization is ever at risk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage, Repositories
    from ..storage.models import NewSummary, Summary
    from .locking import LeaseKeeper
    from .settings import CompactionReport

FLUSH_AFTER_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class _Pending:
    """A summarized span waiting for the batch write (``start``/``end``: ordinals as currently stored)."""

    record: NewSummary
    start: int
    end: int
    at: int  # ordinal of the new summary item in the local model
    outcome: str
    failures: tuple[str, ...]


class PendingWrites:
    """The pending spans of one conversation; ``written`` collects every summary once it is stored."""

    def __init__(self, storage: ProjectStorage, conversation_id: int, keeper: LeaseKeeper | None,
                 report: CompactionReport, max_pending: int, written: dict[str, Summary]) -> None:
        self.storage, self.cid, self.keeper, self.report = storage, conversation_id, keeper, report
        self.max_pending = max_pending
        self.written = written
        self.items: list[_Pending] = []
        self.unflushed_seconds = 0.0

    def add(self, record: NewSummary, start: int, end: int, outcome: str, failures: tuple[str, ...],
            seconds: float) -> None:
        """Queue ``record`` replacing stored ordinals ``start..end`` (as the local model numbers them)."""
        if self.items and start <= self.items[-1].at:
            self.flush()  # only spans after every pending one can share a write
        shift = sum(p.end - p.start for p in self.items)  # how far later ordinals moved since the last write
        self.items.append(_Pending(record, start + shift, end + shift, start, outcome, failures))
        self.unflushed_seconds += seconds
        if len(self.items) >= self.max_pending or self.unflushed_seconds >= FLUSH_AFTER_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the pending summaries, lineage and context replacements in ONE fenced transaction.

        Replacements run from the last span to the first so each one shifts as few rows as possible;
        the result equals applying them one by one in order.
        """
        if not self.items:
            return
        assert self.keeper is not None
        self.keeper.renew_if_due()
        lease = self.keeper.lease
        pending = list(self.items)

        def write(repos: Repositories) -> list[Summary]:
            repos.coordination.check_fence(lease)
            created = [repos.summaries.create_summary(p.record) for p in pending]
            for p in reversed(pending):
                repos.context.replace_range(self.cid, p.start, p.end, p.record.summary_id)
            return created

        started = time.perf_counter()
        created = self.storage.transaction(write)
        self.report.storage_seconds += time.perf_counter() - started
        self.items.clear()
        self.unflushed_seconds = 0.0
        for summary, p in zip(created, pending, strict=True):
            self.written[summary.summary_id] = summary
            self.report.note_pass(summary.depth, p.outcome, p.failures)
