"""Commit one source's batches: a checkpoint that moves by compare-and-swap, retried on a stale key set."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import ConflictError, StorageError
from ..storage.contracts import ProjectStorage, Repositories
from ..storage.models import Checkpoint, FormatIdentity
from .batch import Accepted, BatchOutcome, BatchTarget, Quarantined, StaleKeySet, write_batch
from .errors import IngestError
from .links import SpawnIndex, SpawnOf, known_spawns
from .runs import Run, Runs
from .source import BoundSource
from .state import CheckpointState


class CasConflict(Exception):
    """Another writer advanced this source's checkpoint: start over from the new one."""


class BatchCommitter:
    """Writes the batches of one source to ``storage``, tracking the checkpoint each commit moved to."""

    def __init__(self, storage: ProjectStorage, *, key: str, src: BoundSource, session_id: str,
                 fmt: FormatIdentity, scrubber_version: str, key_version: int, main: Run, runs: Runs,
                 spawn_of: SpawnOf | None, spawn_index: SpawnIndex, expected: Checkpoint | None,
                 base: Checkpoint | None, conversation_id: int | None) -> None:
        self.storage, self.key, self.src, self.session_id, self.fmt = storage, key, src, session_id, fmt
        self.scrubber_version, self.key_version = scrubber_version, key_version
        self.main, self.runs, self.spawn_of, self.spawn_index = main, runs, spawn_of, spawn_index
        self.expected, self.base, self.conversation_id = expected, base, conversation_id
        self.stored_keys: set[str] | None = None

    def commit(self, accepted: list[Accepted], quarantined: list[Quarantined], end: int, last_ordinal: int,
               position: tuple[int, int, bool, dict[str, int]], prefix: str) -> BatchOutcome:
        """Store ``accepted`` and move the checkpoint to ``end`` (``prefix``: the digest of bytes up to it).

        ``position`` is ``(next_seq, next_ordinal, open_tail, runs)`` after the batch's last record.
        """
        expected, base = self.expected, self.base
        next_seq, next_ordinal, open_tail, runs = position
        state = CheckpointState(self.session_id, self.fmt, self.src.identity, self.conversation_id,
                                next_seq, next_ordinal, open_tail, key_version=self.key_version, runs=runs)

        def checkpoint(inserted: int, skipped: int, conversation_id: int | None) -> Checkpoint:
            return Checkpoint(
                source_key=self.key,
                revision=(expected.revision + 1) if expected else 1,
                byte_offset=end,
                prefix_sha256=prefix,
                scrubber_version=self.scrubber_version,
                last_source_ordinal=last_ordinal,
                imported=(base.imported if base else 0) + inserted,
                skipped=(base.skipped if base else 0) + skipped,
                quarantined=(base.quarantined if base else 0) + len(quarantined),
                state_json=replace(state, conversation_id=conversation_id).to_json(),
            )

        spawn_of = self._prepare(accepted)
        while True:
            target = BatchTarget(self.key, self.src.locator, self.session_id, self.fmt, self.scrubber_version,
                                 expected, checkpoint, self.conversation_id, self.main, self.runs.run,
                                 spawn_of, self.spawn_index)
            try:
                outcome = self._write(accepted, target)
            except StaleKeySet:
                self.stored_keys = {r.ingest_key for r in self.storage.native_transcripts.list_by_source(
                    self.src.locator)}
                continue
            except ConflictError:
                if self.storage.native_transcripts.get_checkpoint(self.key) != expected:
                    raise CasConflict from None
                raise
            break
        self.conversation_id = outcome.conversation_id
        self.expected = outcome.checkpoint
        self.base = outcome.checkpoint
        if self.stored_keys is not None:
            self.stored_keys.update(a.ingest_key for a in accepted)
        return outcome

    def _write(self, accepted: list[Accepted], target: BatchTarget) -> BatchOutcome:
        try:
            return _transaction(self.storage, lambda repos: write_batch(repos, accepted, target, self.stored_keys))
        except BaseException:
            self.spawn_index.forget()  # it may hold messages the rollback took back
            raise

    def _prepare(self, accepted: list[Accepted]) -> SpawnOf | None:
        """Work done before the transaction takes the write lock: the backend encodes the records not stored
        yet, and the spawns among the batch's parts are found (the ``spawn_of`` the transaction uses)."""
        new = [a for a in accepted if self.stored_keys is None or a.ingest_key not in self.stored_keys]
        self.storage.prepare_writes([a.message for a in new if a.message is not None],
                                    [(a.payload_json, a.message) for a in new])
        return known_spawns(self.spawn_of, [a.message for a in accepted if a.message is not None])


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
