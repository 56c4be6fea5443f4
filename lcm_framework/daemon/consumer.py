"""The daemon's background work on the outbox: the consumer (local promotion of hook events, in order) and,
on a backend with an inbox, the team-sync drain (``sync.worker``), two independent loops."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, DataValidationError, StorageUnavailableError, TranscriptError
from ..outbox import Outbox, OutboxEvent, outbox_path

if TYPE_CHECKING:
    from ..sync.worker import DrainWorker

log = logging.getLogger("lcm.daemon")

PERMANENT_ERRORS = (TranscriptError, DataValidationError, ConfigError)
DRAIN_BATCH = 50
DRAIN_INTERVAL_S = 2.0
KEEP_PROCESSED_S = 7 * 24 * 3600.0

Run = Callable[..., Awaitable[Any]]
Handle = Callable[[OutboxEvent, "Outbox"], Awaitable[Any]]
LocalOnly = Callable[[Mapping[str, Any]], Awaitable[bool]]


class BackgroundLoop(ABC):
    """One pass (``step``) every ``interval_s`` or when woken, until stopped; a failing pass is reported to
    ``failed`` and retried at the next one."""

    def __init__(self, interval_s: float) -> None:
        self._interval = interval_s
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.closing = False

    @abstractmethod
    async def step(self) -> None:
        """One pass."""

    @abstractmethod
    def failed(self, exc: Exception) -> None:
        """Report a pass that raised (it is retried at the next one)."""

    def wake(self) -> None:
        self._wakeup.set()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        while not self.closing:
            try:
                await self.step()
            except Exception as exc:
                self.failed(exc)
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout=self._interval)
            except TimeoutError:
                pass
            self._wakeup.clear()

    async def stop(self, timeout_s: float) -> None:
        """Let the current pass finish (bounded by ``timeout_s``), then stop."""
        self.closing = True
        self._wakeup.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=timeout_s)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()


class OutboxConsumer(BackgroundLoop):
    """Drains the outbox of ``home`` through ``handle(event, outbox)`` (blocking calls through ``run``),
    every ``DRAIN_INTERVAL_S`` or when woken; a permanent error marks the event processed (its code kept
    in the event, logged), any other leaves it to be retried after a growing delay. An unavailable backend
    also ends the pass (the events after it would wait for it too), and the first event processed once it
    is back makes every event it held up due at once: an outage backlog goes through when the backend
    returns, not up to ``MAX_BACKOFF_S`` later. ``local_only(payload)`` says whether the
    event's backend has no inbox (then it is never delivered either, and retention may drop it)."""

    def __init__(self, home: Path, run: Run, handle: Handle, describe: Callable[[BaseException], str],
                 code: Callable[[BaseException], str], local_only: LocalOnly) -> None:
        super().__init__(DRAIN_INTERVAL_S)
        self.home, self._run, self._handle, self._describe, self._code = home, run, handle, describe, code
        self._local_only = local_only
        self.drained_events = 0
        self.unavailable: str | None = None

    async def step(self) -> None:
        await self.drain()

    def failed(self, exc: Exception) -> None:
        log.warning("outbox drain failed: %s", self._describe(exc))

    async def drain(self) -> int:
        """Process due outbox events in sequence order (bounded batches); returns how many were processed."""
        path = outbox_path(self.home)
        if not path.exists():
            return 0
        done = 0
        run, code = self._run, self._code
        box = await run(Outbox, path)
        away = False
        try:
            while not self.closing and not away:
                batch = await run(box.ready, limit=DRAIN_BATCH)
                if not batch:
                    break
                revived = 0
                for item in batch:
                    if self.closing:
                        break
                    try:
                        await self._handle(item, box)
                    except StorageUnavailableError as exc:
                        await run(box.mark_failed, item.uuid, code(exc))
                        if self.unavailable is None:
                            log.warning("outbox drain paused, the backend is unavailable: %s", self._describe(exc))
                        self.unavailable = self._describe(exc)
                        away = True
                        break
                    except PERMANENT_ERRORS as exc:
                        await run(box.mark_processed, item.uuid, error_code=code(exc),
                                  local_only=await self._local_only(item.payload))
                        log.warning("outbox event %s (%s) given up: %s", item.seq, item.event, self._describe(exc))
                    except Exception as exc:
                        await run(box.mark_failed, item.uuid, code(exc))
                        log.warning("outbox event %s failed (%s); will retry", item.seq, code(exc))
                    else:
                        await run(box.mark_processed, item.uuid, local_only=await self._local_only(item.payload))
                        done += 1
                        if self.unavailable is not None:  # back: what the outage held up goes now
                            self.unavailable = None
                            revived = await run(box.retry_waiting_now)
                if len(batch) < DRAIN_BATCH and not revived:
                    break
            if done:
                await run(box.prune_processed, older_than_s=KEEP_PROCESSED_S)
        finally:
            await run(box.close)
        self.drained_events += done
        return done


class DrainLoop(BackgroundLoop):
    """The team-sync drain in the background: ``worker.run_once`` (through ``run``) every ``interval_s`` or
    when woken, while ``enabled()`` (the backend has an inbox). An outage is logged once per change and
    retried at the next tick; nothing is lost meanwhile (``sync.worker``)."""

    def __init__(self, run: Run, make_worker: Callable[[], DrainWorker | None], interval_s: float,
                 describe: Callable[[BaseException], str]) -> None:
        super().__init__(interval_s)
        self._run, self._make, self._describe = run, make_worker, describe
        self._worker: DrainWorker | None = None
        self.passes = 0
        self.applied = 0
        self.last_error: str | None = None

    async def step(self) -> None:
        await self.tick()

    def failed(self, exc: Exception) -> None:
        error = self._describe(exc)
        if error != self.last_error:
            log.warning("team sync drain failed: %s (retrying)", error)
        self.last_error = error

    async def tick(self) -> None:
        """One pass, when the backend has an inbox (the worker is built on first use)."""
        if self._worker is None:
            self._worker = await self._run(self._make)
            if self._worker is None:
                self.closing = True  # no inbox (SQLite): nothing to deliver, ever
                return
        report = await self._run(self._worker.run_once)
        self.passes += 1
        self.applied += report.applied
        if report.errors:
            self.last_error = report.errors[-1]
        elif report.progressed:
            self.last_error = None
