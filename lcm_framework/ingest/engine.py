"""Import one transcript source: sniff, locate the session, resume or rescan, then commit batches.

The flow per file (see ``docs/import.md``):

1. bind the file to one descriptor (``BoundSource``) and fence it;
2. sniff the format from the first parsed records, find the session id and
   working directory (that decides the project);
3. read the checkpoint: resume only when its payload version, session,
   format identity, scrubber version and prefix digest all match; the
   verified prefix is replayed locally (no writes) to rebuild occurrence
   numbering and message order, else everything is rescanned from byte 0
   and converges through ingest keys;
4. stream the rest in batches: rejected lines go to the local quarantine,
   accepted ones are stored with their messages in one transaction that
   moves the checkpoint by compare-and-swap; the source is fenced before and
   after every batch, and the committed range is rehashed at the end.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConflictError, LcmError, StorageError
from ..storage.contracts import ProjectStorage, Repositories
from ..storage.models import Checkpoint, ProjectRef
from ..transcripts.contracts import MappedRecord, SpawnedBy, SubagentFormat, TranscriptFormat
from ..transcripts.reader import ParsedRecord, RejectedRecord, read_records
from .batch import Accepted, BatchOutcome, BatchTarget, Quarantined, StaleKeySet, with_seq, write_batch
from .context import RunContext
from .discovery import SourceSpec
from .errors import CheckpointConflictError, IngestError, SourceChangedError, UnknownFormatError
from .report import FileError, FileReport, ProgressEvent
from .runs import Run, Runs, file_run
from .source import CHUNK, BoundSource
from .state import CheckpointState, Counters, IngestKeys, key_version, resumable_counters, source_key

if TYPE_CHECKING:
    from ..scrub import Scrubber

HEAD_RECORDS = 8
IDENTITY_SCAN_RECORDS = 200
HEAD_BUFFER = 64 * 1024
"""Read buffer when only the first records matter (format sniffing, the session's identity)."""
MAX_CHANGED_ATTEMPTS = 3
MAX_CONFLICT_ATTEMPTS = 30

Item = Accepted | Quarantined


class _CasConflict(Exception):
    """Another writer advanced this source's checkpoint: start over from the new one."""


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
        except _CasConflict:
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
    """One attempt at one bound source."""

    def __init__(self, ctx: RunContext, source: BoundSource, report: FileReport, format_id: str | None,
                 force_rescan: bool) -> None:
        self.ctx = ctx
        self.src = source
        self.report = report
        self.format_id = format_id
        self.force_rescan = force_rescan
        self.stored_keys: set[str] | None = None
        self.hasher = hashlib.sha256()
        self.hashed_upto = 0

    # --- set-up ---------------------------------------------------------------

    def _records(self, start: int = 0, first_ordinal: int = 0, *,
                 head: bool = False) -> Iterator[ParsedRecord | RejectedRecord]:
        """The records from ``start``; ``head``: only the first few will be read (a small read buffer)."""
        stream = self.src.open_stream(start, buffer_size=HEAD_BUFFER if head else CHUNK)
        return read_records(stream, start_offset=start, first_ordinal=first_ordinal)

    def _sniff(self) -> TranscriptFormat:
        if self.format_id is None:
            head: list[Any] = []
            for n, rec in enumerate(self._records(head=True)):
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
        for n, rec in enumerate(self._records(head=True)):
            if n >= IDENTITY_SCAN_RECORDS or (session_id and cwd):
                break
            if not isinstance(rec, ParsedRecord):
                continue
            try:
                mapped = self._map(fmt, scrubber.scrub_record(rec.value).value)
            except ScrubRejected:
                continue
            session_id = session_id or mapped.session_id
            cwd = cwd or mapped.cwd
            spawned_by = spawned_by or mapped.spawned_by
        return session_id or Path(self.src.locator).stem, cwd, spawned_by

    def _map(self, fmt: TranscriptFormat, value: Any) -> MappedRecord:
        try:
            return fmt.map_record(value)
        except Exception as exc:  # a format plugin broke its "never raises" contract
            raise IngestError(f"format {fmt.identity.identifier} failed to map a record ({type(exc).__name__})",
                              locator=self.src.locator, code="format_error") from None

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
        self.main: Run = file_run(session_id, spawned_by)
        self.runs = Runs(session_id, whole_file_is_a_run=spawned_by is not None)
        self.spawn_of = fmt.spawn if isinstance(fmt, SubagentFormat) else None
        report.project_root, report.project_id, report.session_id = ref.root, ref.project_id, self.main.session_id
        self.ref, self.session_id = ref, session_id
        self.storage: ProjectStorage | None = ctx.storage(ref)
        self.scrubber = ctx.scrubber(Path(ref.root))
        self.key = source_key(fmt.identity.client_name, src.locator)
        cp = self.storage.native_transcripts.get_checkpoint(self.key) if self.storage else None
        self.keys = IngestKeys(fmt.identity, session_id, src.locator, key_version(cp))
        self.expected = cp
        self.conversation_id = _conversation_id(cp, session_id)
        report.conversation_id = report.conversation_id or self.conversation_id
        src.check()
        counters, start, first_ordinal, replay_until = self._resume_point(cp)
        if counters is None:
            report.status = "unchanged"
            return
        if self.resumed:
            report.resumed_from = max(report.resumed_from, start if replay_until < 0 else replay_until)
        else:
            report.rescanned = report.rescanned or cp is not None
        self.base = cp if self.resumed else None
        self._stream(counters, start, first_ordinal, replay_until)

    def _resume_point(self, cp: Checkpoint | None) -> tuple[Counters | None, int, int, int]:
        """``(counters, start, first_ordinal, replay_until)``; counters None means nothing new to read.

        ``replay_until >= 0``: read from 0 and replay records ending at or
        before it; ``-1``: no replay (fresh, rescan, or cached counters).
        """
        fresh = (Counters(), 0, 0, -1)
        self.resumed = False
        if cp is None or self.force_rescan:
            return fresh
        saved = resumable_counters(cp, session_id=self.session_id, fmt=self.fmt.identity,
                                   scrubber_version=self.scrubber.version)
        if saved is None or cp.byte_offset > self.src.size:
            return fresh
        self.src.digest_range(self.hasher, 0, cp.byte_offset)
        self.hashed_upto = cp.byte_offset
        if self.hasher.hexdigest() != cp.prefix_sha256:
            self._reset_hash()
            return fresh
        offset = cp.byte_offset
        if saved.open_tail:
            nxt = self.src.read_at(offset, 1)
            if nxt not in (b"", b"\n"):
                self._reset_hash()
                return fresh  # the unterminated last line grew: the prefix record changed
            offset += len(nxt)
        if offset >= self.src.size:
            return None, offset, 0, -1
        self.saved = saved
        self.resumed = True
        cached = self.ctx.cache.get(self.ref.project_id, cp)
        if cached is not None and (cached.next_seq, cached.next_ordinal, cached.runs) == (
                saved.next_seq, saved.next_ordinal, saved.runs):
            return cached, offset, saved.next_ordinal, -1
        return Counters(), 0, 0, offset

    def _reset_hash(self) -> None:
        self.hasher = hashlib.sha256()
        self.hashed_upto = 0

    def _stream(self, counters: Counters, start: int, first_ordinal: int, replay_until: int) -> None:
        from ..scrub import ScrubRejected

        self.counters = counters
        self.ScrubRejected = ScrubRejected
        ends_with_newline = self.src.size == 0 or self.src.read_at(self.src.size - 1, 1) == b"\n"
        batch: list[Item] = []
        batch_bytes = 0
        replaying = replay_until >= 0
        limit = self.ctx.options.batch_size
        submitted = False
        for rec in self._records(start, first_ordinal):
            if replaying:
                if rec.end <= replay_until:
                    self._replay(rec)
                    continue
                self._end_replay()
                replaying = False
            unterminated = rec.end == self.src.size and not ends_with_newline
            if unterminated and isinstance(rec, RejectedRecord):
                break  # an incomplete last line: left for a later run, never quarantined
            item = self._process(rec)
            counters.open_tail = unterminated
            batch.append(item)
            batch_bytes += len(item.payload_json) if isinstance(item, Accepted) else 0
            if len(batch) >= limit or batch_bytes >= self.ctx.options.max_batch_bytes:
                self._flush(batch, counters.snapshot())
                submitted = True
                batch, batch_bytes = [], 0
        if replaying:
            self._end_replay()
        if batch or (not submitted and not self.ctx.options.dry_run
                     and (self.expected is None or not self.resumed)):
            # (an empty batch: a verified empty or emptied source still records its checkpoint)
            self._flush(batch, counters.snapshot())
        self._verify_committed()
        if self.expected is not None and not self.ctx.options.dry_run:
            self.ctx.cache.put(self.ref.project_id, self.expected, counters)

    def _replay(self, rec: ParsedRecord | RejectedRecord) -> None:
        if isinstance(rec, ParsedRecord):
            self._process(rec)
        self.counters.next_ordinal = rec.ordinal + 1

    def _end_replay(self) -> None:
        saved, now = self.saved, self.counters
        if (now.next_seq, now.next_ordinal, now.runs) != (saved.next_seq, saved.next_ordinal, saved.runs):
            raise _Rescan

    def _process(self, rec: ParsedRecord | RejectedRecord) -> Item:
        counters = self.counters
        counters.next_ordinal = rec.ordinal + 1
        if isinstance(rec, RejectedRecord):
            return Quarantined(rec.ordinal, rec.end, rec.reason.value, rec.raw_sha256)
        try:
            scrubbed = self.scrubber.scrub_record(rec.value)
        except self.ScrubRejected as exc:
            reason = getattr(exc, "reason", "residual-secret")
            return Quarantined(rec.ordinal, rec.end, getattr(reason, "value", str(reason)), rec.raw_sha256)
        mapped = self._map(self.fmt, scrubbed.value)
        message = None
        run = self.runs.key(mapped, counters)
        if mapped.message is not None:
            if run is None:
                message = with_seq(mapped.message, counters.next_seq)
                counters.next_seq += 1
            else:
                seq = counters.runs.get(run, 0)
                message = with_seq(mapped.message, seq)
                counters.runs[run] = seq + 1
        key = self.keys.key(scrubbed.sha256, counters.occurrence(scrubbed.sha256))
        return Accepted(rec.ordinal, rec.end, scrubbed.canonical_json, scrubbed.sha256, key,
                        scrubbed.redactions, message, run)

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
        src.digest_range(self.hasher, self.hashed_upto, end)
        self.hashed_upto = end
        if ctx.options.dry_run:
            self._count(batch, accepted, quarantined, None)
            return
        assert self.storage is not None
        if quarantined:
            ctx.quarantine(self.ref.project_id, self.fmt.identity.client_name).add(
                (src.locator, q.ordinal, q.reason, q.raw_sha256) for q in quarantined
            )
        outcome = self._commit(accepted, quarantined, end, batch[-1].ordinal if batch else 0, position)
        src.check()  # a change while the commit was pending fails the run (the next run converges)
        self._count(batch, accepted, quarantined, outcome)

    def _commit(self, accepted: list[Accepted], quarantined: list[Quarantined], end: int,
                last_ordinal: int, position: tuple[int, int, bool, dict[str, int]]) -> BatchOutcome:
        assert self.storage is not None
        expected = self.expected
        base = self.base
        prefix = self.hasher.copy().hexdigest()
        next_seq, next_ordinal, open_tail, runs = position
        state = CheckpointState(self.session_id, self.fmt.identity, self.src.identity, self.conversation_id,
                                next_seq, next_ordinal, open_tail, key_version=self.keys.version, runs=runs)

        def checkpoint(inserted: int, skipped: int, conversation_id: int | None) -> Checkpoint:
            return Checkpoint(
                source_key=self.key,
                revision=(expected.revision + 1) if expected else 1,
                byte_offset=end,
                prefix_sha256=prefix,
                scrubber_version=self.scrubber.version,
                last_source_ordinal=last_ordinal,
                imported=(base.imported if base else 0) + inserted,
                skipped=(base.skipped if base else 0) + skipped,
                quarantined=(base.quarantined if base else 0) + len(quarantined),
                state_json=replace(state, conversation_id=conversation_id).to_json(),
            )

        while True:
            target = BatchTarget(self.key, self.src.locator, self.session_id, self.fmt.identity,
                                 self.scrubber.version, expected, checkpoint, self.conversation_id, self.main,
                                 self.runs.run, self.spawn_of)
            try:
                outcome = _transaction(self.storage, lambda repos, t=target: write_batch(
                    repos, accepted, t, self.stored_keys))
            except StaleKeySet:
                self.stored_keys = {r.ingest_key for r in self.storage.native_transcripts.list_by_source(
                    self.src.locator)}
                continue
            except ConflictError:
                if self.storage.native_transcripts.get_checkpoint(self.key) != expected:
                    raise _CasConflict from None
                raise
            break
        self.conversation_id = outcome.conversation_id
        self.expected = outcome.checkpoint
        self.base = outcome.checkpoint
        if self.stored_keys is not None:
            self.stored_keys.update(a.ingest_key for a in accepted)
        return outcome

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
        report.bytes_read = self.hashed_upto
        progress = self.ctx.options.progress
        if progress is not None:
            progress(ProgressEvent("bytes", Path(report.path), self.hashed_upto, self.src.size))

    def _verify_committed(self) -> None:
        """Rehash the whole committed range once more: a same-size rewrite cannot hide behind times."""
        if self.hashed_upto and self.src.prefix_sha256(self.hashed_upto) != self.hasher.hexdigest():
            raise SourceChangedError("bytes changed while being imported", locator=self.src.locator)
        self.src.check()


def _transaction(storage: ProjectStorage, fn: Any) -> BatchOutcome:
    """Run ``fn`` in one transaction, re-raising our own signals unwrapped whatever the backend does."""
    raised: list[BaseException] = []

    def body(repos: Repositories) -> BatchOutcome:
        try:
            result: BatchOutcome = fn(repos)
            return result
        except (StaleKeySet, IngestError) as exc:
            raised.append(exc)
            raise

    try:
        return storage.transaction(body)
    except StorageError:
        if raised:
            raise raised[0] from None
        raise
    except StaleKeySet:
        raise


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

