"""Import one transcript source: sniff, locate the session, resume or rescan, then commit batches.

The flow per file (see ``docs/import.md``):

1. bind the file to one descriptor (``BoundSource``) and fence it;
2. sniff the format from the first parsed records, find the session id and
   working directory (that decides the project); those first records are
   read, parsed and scrubbed once: the import goes on with them;
3. read the checkpoint: resume only when its payload version, session,
   format identity, scrubber version and prefix digest all match; the
   verified prefix is replayed locally (no writes) to rebuild occurrence
   numbering and message order, else everything is rescanned from byte 0
   and converges through ingest keys;
4. stream the rest in batches: rejected lines go to the local quarantine,
   accepted ones are stored with their messages in one transaction that
   moves the checkpoint by compare-and-swap; the source is fenced before and
   after every batch. The prefix digest hashes the bytes the stream read, so
   each byte of the file is read once.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LcmError
from ..storage.models import Checkpoint, ProjectRef
from ..transcripts.contracts import SpawnedBy, SubagentFormat, TranscriptFormat
from ..transcripts.reader import ParsedRecord, RejectedRecord, read_records
from .batch import Accepted, BatchOutcome, Quarantined
from .commit import BatchCommitter, CasConflict
from .context import RunContext
from .discovery import SourceSpec
from .errors import CheckpointConflictError, IngestError, SourceChangedError, UnknownFormatError
from .prefix import PrefixHash
from .records import Item, RecordProcessor, map_record
from .report import FileError, FileReport, ProgressEvent
from .resume import ResumePoint, resume_point
from .runs import Runs, file_run
from .source import CHUNK, BoundSource
from .state import Counters, IngestKeys, key_version, source_key

if TYPE_CHECKING:
    from ..scrub import Scrubber
    from ..scrub.scrubber import ScrubbedRecord

Record = ParsedRecord | RejectedRecord

HEAD_RECORDS = 8
IDENTITY_SCAN_RECORDS = 200
HEAD_BUFFER = 64 * 1024
"""Read buffer of the stream from byte 0: a file that turns out unchanged is read no further than its head."""
HEAD_BYTES = 16 * 2**20
"""The first records are kept for the import at most up to this many bytes (the identity scan stops there)."""
MAX_CHANGED_ATTEMPTS = 3
MAX_CONFLICT_ATTEMPTS = 30


class _Rescan(Exception):
    """The verified prefix replayed to different counters than saved: rescan from byte 0."""


def import_spec(ctx: RunContext, spec: SourceSpec, *, format_id: str | None = None,
                explicit: bool = False) -> FileReport:
    """Import one planned source; failures end up in ``report.error`` (typed and sanitized)."""
    report = FileReport(path=str(spec.path), locator=spec.locator)
    changed = conflicts = 0
    force_rescan = False
    while True:
        try:
            with BoundSource(spec.root, spec.locator) as source:
                _FileImport(ctx, source, report, format_id, force_rescan).run()
            return report
        except UnknownFormatError as exc:
            if explicit:
                return _fail(report, exc)
            report.status = "skipped"
            return report
        except SourceChangedError as exc:
            changed += 1
            if changed >= MAX_CHANGED_ATTEMPTS:
                return _fail(report, exc)
        except CasConflict:
            conflicts += 1
            if conflicts >= MAX_CONFLICT_ATTEMPTS:
                return _fail(report, CheckpointConflictError("other writers kept advancing this source",
                                                             locator=spec.locator))
            time.sleep(min(0.05 * 2**conflicts, 1.0))  # let the other writer get ahead, then resume after it
        except _Rescan:
            force_rescan = True
        except LcmError as exc:
            return _fail(report, exc)
        except OSError as exc:  # the file became unreadable mid-run (I/O error, permissions)
            return _fail(report, IngestError(f"cannot read ({exc.strerror or type(exc).__name__})",
                                             locator=spec.locator, code="io_error"))


def _fail(report: FileReport, exc: LcmError) -> FileReport:
    report.status = "failed"
    report.error = FileError(getattr(exc, "code", type(exc).__name__), str(exc))
    return report


class _FileImport:
    """One attempt at one bound source: what it is, where it resumes, then its batches."""

    def __init__(self, ctx: RunContext, source: BoundSource, report: FileReport, format_id: str | None,
                 force_rescan: bool) -> None:
        self.ctx = ctx
        self.src = source
        self.report = report
        self.format_id = format_id
        self.force_rescan = force_rescan
        self.prefix = PrefixHash(source)
        self.committer: BatchCommitter | None = None
        self._reading: Iterator[Record] | None = None
        self._head: list[Record] = []
        self._head_bytes = 0
        self._head_scrubbed: dict[int, ScrubbedRecord] = {}
        self._head_scrubber: Scrubber | None = None

    # --- set-up ---------------------------------------------------------------

    def _first_records(self) -> Iterator[Record]:
        """The records from byte 0 for sniffing and identity: those read so far, then more from the same
        stream, kept (up to ``HEAD_BYTES``) for the import to go on with."""
        if self._reading is None:
            self._reading = read_records(self.src.open_stream(0, buffer_size=HEAD_BUFFER))
        n = 0
        while True:
            if n == len(self._head):
                if self._head_bytes >= HEAD_BYTES:
                    return
                rec = next(self._reading, None)
                if rec is None:
                    return
                self._head.append(rec)
                self._head_bytes += rec.end - rec.start
            yield self._head[n]
            n += 1

    def _records(self, start: int, first_ordinal: int) -> Iterator[Record]:
        """The records from ``start``: from byte 0, the first records already read and the rest of their stream;
        else a stream from ``start`` (what it reads past the prefix already hashed is kept for the hash)."""
        if start == 0 and self._reading is not None:
            head, self._head = self._head, []
            yield from head
            yield from self._reading
            return
        stream = self.src.open_stream(start, buffer_size=CHUNK, keep_from=self.prefix.upto)
        yield from read_records(stream, start_offset=start, first_ordinal=first_ordinal)

    def _sniff(self) -> TranscriptFormat:
        if self.format_id is None:
            head: list[Any] = []
            for n, rec in enumerate(self._first_records()):
                if isinstance(rec, ParsedRecord):
                    head.append(rec.value)
                if len(head) >= HEAD_RECORDS or n >= 4 * HEAD_RECORDS:
                    break
            found = self.ctx.app.plugins.sniff_format(head) if head else None
        else:
            found = self.format_id
        if found is None or found not in self.ctx.formats:
            raise UnknownFormatError("not a transcript of a registered format", locator=self.src.locator)
        return self.ctx.formats[found]

    def _identity(self, fmt: TranscriptFormat, scrubber: Scrubber) -> tuple[str, str | None, SpawnedBy | None]:
        """The session id, working directory and sub-agent run (if the file is one) that the first records
        or the file's location state (scrubbed, as stored)."""
        from ..scrub import ScrubRejected

        session_id: str | None = None
        cwd: str | None = None
        spawned_by = fmt.source_subagent(self.src.path) if isinstance(fmt, SubagentFormat) else None
        self._head_scrubber = scrubber
        for n, rec in enumerate(self._first_records()):
            if n >= IDENTITY_SCAN_RECORDS or (session_id and cwd):
                break
            if not isinstance(rec, ParsedRecord):
                continue
            try:
                scrubbed = self._head_scrubbed[rec.ordinal] = scrubber.scrub_record(rec.value,
                                                                                    float_free=rec.float_free)
            except ScrubRejected:
                continue
            mapped = map_record(fmt, scrubbed.value, self.src.locator)
            session_id = session_id or mapped.session_id
            cwd = cwd or mapped.cwd
            spawned_by = spawned_by or mapped.spawned_by
        return session_id or Path(self.src.locator).stem, cwd, spawned_by

    def _project_root(self, cwd: str | None) -> Path:
        if self.ctx.options.project is not None:
            return self.ctx.options.project.resolve()
        if cwd and os.path.isabs(cwd) and "\x00" not in cwd:
            return Path(cwd)
        return self.ctx.app.config.project_root

    # --- the run ----------------------------------------------------------------

    def run(self) -> None:
        src, report, ctx = self.src, self.report, self.ctx
        report.bytes_total = src.size
        src.check()
        fmt = self._sniff()
        report.format_id = fmt.identity.identifier
        if report.format_id not in ctx.selected:
            report.status = "skipped"
            return
        self.fmt = fmt
        session_id, cwd, spawned_by = self._identity(fmt, ctx.scrubber(ctx.app.config.project_root))
        ref: ProjectRef = ctx.project_ref(self._project_root(cwd))
        main = file_run(session_id, spawned_by)
        runs = Runs(session_id, whole_file_is_a_run=spawned_by is not None)
        report.project_root, report.project_id, report.session_id = ref.root, ref.project_id, main.session_id
        report.subagent_run = main.link is not None
        self.ref = ref
        storage = ctx.storage(ref)
        scrubber = ctx.scrubber(Path(ref.root))
        key = source_key(fmt.identity.client_name, src.locator)
        cp = storage.native_transcripts.get_checkpoint(key) if storage else None
        keys = IngestKeys(fmt.identity, session_id, src.locator, key_version(cp))
        conversation_id = _conversation_id(cp, session_id)
        report.conversation_id = report.conversation_id or conversation_id
        src.check()
        point = resume_point(cp, self.prefix, force_rescan=self.force_rescan, session_id=session_id,
                             fmt=fmt.identity, scrubber_version=scrubber.version, cache=ctx.cache,
                             project_id=ref.project_id)
        if point.counters is None:
            report.status = "unchanged"
            return
        if point.resumed:
            report.resumed_from = max(report.resumed_from, point.start if point.replay_until < 0
                                      else point.replay_until)
        else:
            report.rescanned = report.rescanned or cp is not None
        if storage is not None:
            self.committer = BatchCommitter(
                storage, key=key, src=src, session_id=session_id, fmt=fmt.identity,
                scrubber_version=scrubber.version, key_version=keys.version, main=main, runs=runs,
                spawn_of=fmt.spawn if isinstance(fmt, SubagentFormat) else None,
                spawn_index=ctx.spawn_index(ref), expected=cp,
                base=cp if point.resumed else None, conversation_id=conversation_id)
        self.expected = cp
        processor = RecordProcessor(fmt, scrubber, runs, keys, src.locator, point.counters)
        if scrubber is not self._head_scrubber:
            self._head_scrubbed.clear()  # scrubbed with another project's rules: scrubbed again
        self._stream(processor, point)

    def _stream(self, processor: RecordProcessor, point: ResumePoint) -> None:
        counters = processor.counters
        ends_with_newline = self.src.size == 0 or self.src.read_at(self.src.size - 1, 1) == b"\n"
        batch: list[Item] = []
        batch_bytes = 0
        replaying = point.replay_until >= 0
        limit = self.ctx.options.batch_size
        submitted = False
        scrubbed = self._head_scrubbed
        for rec in self._records(point.start, point.first_ordinal):
            if replaying:
                if rec.end <= point.replay_until:
                    processor.replay(rec, scrubbed.pop(rec.ordinal, None) if scrubbed else None)
                    continue
                _end_replay(counters, point)
                replaying = False
            unterminated = rec.end == self.src.size and not ends_with_newline
            if unterminated and isinstance(rec, RejectedRecord):
                break  # an incomplete last line: left for a later run, never quarantined
            item = processor.process(rec, scrubbed.pop(rec.ordinal, None) if scrubbed else None)
            counters.open_tail = unterminated
            batch.append(item)
            batch_bytes += len(item.payload_json) if isinstance(item, Accepted) else 0
            if len(batch) >= limit or batch_bytes >= self.ctx.options.max_batch_bytes:
                self._flush(batch, counters.snapshot())
                submitted = True
                batch, batch_bytes = [], 0
        if replaying:
            _end_replay(counters, point)
        if batch or (not submitted and not self.ctx.options.dry_run
                     and (self.expected is None or not point.resumed)):
            # (an empty batch: a verified empty or emptied source still records its checkpoint)
            self._flush(batch, counters.snapshot())
        self.src.check()
        if self.expected is not None and not self.ctx.options.dry_run:
            self.ctx.cache.put(self.ref.project_id, self.expected, counters)

    # --- batches -----------------------------------------------------------------

    def _flush(self, batch: list[Item], position: tuple[int, int, bool, dict[str, int]]) -> None:
        """Write one batch: quarantine rows, then the destination transaction.

        ``position`` is ``(next_seq, next_ordinal, open_tail, runs)`` after the batch's last record.
        """
        src, ctx = self.src, self.ctx
        accepted = [i for i in batch if isinstance(i, Accepted)]
        quarantined = [i for i in batch if isinstance(i, Quarantined)]
        end = batch[-1].end if batch else 0
        src.check()
        self.prefix.extend(end)
        if ctx.options.dry_run:
            self._count(batch, accepted, quarantined, None)
            return
        assert self.committer is not None
        if quarantined:
            ctx.quarantine(self.ref.project_id, self.fmt.identity.client_name).add(
                (src.locator, q.ordinal, q.reason, q.raw_sha256) for q in quarantined
            )
        outcome = self.committer.commit(accepted, quarantined, end, batch[-1].ordinal if batch else 0, position,
                                        self.prefix.hexdigest())
        self.expected = outcome.checkpoint
        src.check()  # a change while the commit was pending fails the run (the next run converges)
        self._count(batch, accepted, quarantined, outcome)
        if outcome.stored:
            ctx.embed_beside(self.ref, outcome.stored)

    def _count(self, batch: list[Item], accepted: list[Accepted], quarantined: list[Quarantined],
               outcome: BatchOutcome | None) -> None:
        report = self.report
        report.records += len(batch)
        for q in quarantined:
            report.quarantined[q.reason] += 1
        if outcome is None:  # dry run: what would be stored
            report.stored += len(accepted)
            report.messages += sum(1 for a in accepted if a.message is not None)
            for a in accepted:
                report.redactions.update(a.redactions)
        else:
            report.stored += outcome.inserted
            report.skipped += outcome.skipped
            report.messages += outcome.new_messages
            report.redactions.update(outcome.redactions)
            report.conversation_id = outcome.conversation_id or report.conversation_id
            for session_id, (conversation_id, new) in outcome.runs.items():
                report.runs[session_id] = (conversation_id, report.runs.get(session_id, (0, 0))[1] + new)
        report.bytes_read = self.prefix.upto
        progress = self.ctx.options.progress
        if progress is not None:
            progress(ProgressEvent("bytes", Path(report.path), self.prefix.upto, self.src.size))


def _end_replay(counters: Counters, point: ResumePoint) -> None:
    """The replayed prefix must reproduce the checkpoint's counters, else the source is rescanned."""
    saved = point.saved
    assert saved is not None
    if (counters.next_seq, counters.next_ordinal, counters.runs) != (saved.next_seq, saved.next_ordinal, saved.runs):
        raise _Rescan


def _conversation_id(cp: Checkpoint | None, session_id: str) -> int | None:
    """The conversation a checkpoint of this same session recorded (even when it cannot be resumed)."""
    if cp is None:
        return None
    try:
        state = json.loads(cp.state_json)
        value = state.get("conversation_id") if state.get("session_id") == session_id else None
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None

