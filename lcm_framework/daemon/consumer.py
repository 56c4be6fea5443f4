"""The daemon's outbox consumer: hook events stored while nobody could take them, processed in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataValidationError, TranscriptError
from ..outbox import Outbox, outbox_path

log = logging.getLogger("lcm.daemon")

PERMANENT_ERRORS = (TranscriptError, DataValidationError, ConfigError)
DRAIN_BATCH = 50
DRAIN_INTERVAL_S = 2.0
KEEP_PROCESSED_S = 7 * 24 * 3600.0

Run = Callable[..., Awaitable[Any]]
Handle = Callable[[str, Mapping[str, Any]], Awaitable[Any]]


class OutboxConsumer:
    """Drains the outbox of ``home`` through ``handle(event, payload)`` (blocking calls through ``run``),
    every ``DRAIN_INTERVAL_S`` or when woken; a permanent error marks the event processed (its code kept
    in the event, logged), any other leaves it to be retried."""

    def __init__(self, home: Path, run: Run, handle: Handle, describe: Callable[[BaseException], str],
                 code: Callable[[BaseException], str]) -> None:
        self.home, self._run, self._handle, self._describe, self._code = home, run, handle, describe, code
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.closing = False
        self.drained_events = 0

    def wake(self) -> None:
        self._wakeup.set()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._consume())

    async def _consume(self) -> None:
        while not self.closing:
            try:
                await self.drain()
            except Exception as exc:
                log.warning("outbox drain failed: %s", self._describe(exc))
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout=DRAIN_INTERVAL_S)
            except TimeoutError:
                pass
            self._wakeup.clear()

    async def drain(self) -> int:
        """Process due outbox events in sequence order (bounded batches); returns how many were processed."""
        path = outbox_path(self.home)
        if not path.exists():
            return 0
        done = 0
        run, code = self._run, self._code
        box = await run(Outbox, path)
        try:
            while not self.closing:
                batch = await run(box.ready, limit=DRAIN_BATCH)
                if not batch:
                    break
                for item in batch:
                    if self.closing:
                        break
                    try:
                        await self._handle(item.event, item.payload)
                    except PERMANENT_ERRORS as exc:
                        await run(box.mark_processed, item.uuid, error_code=code(exc))
                        log.warning("outbox event %s (%s) given up: %s", item.seq, item.event, self._describe(exc))
                    except Exception as exc:
                        await run(box.mark_failed, item.uuid, code(exc))
                        log.warning("outbox event %s failed (%s); will retry", item.seq, code(exc))
                    else:
                        await run(box.mark_processed, item.uuid)
                        done += 1
                if len(batch) < DRAIN_BATCH:
                    break
            if done:
                await run(box.prune_processed, older_than_s=KEEP_PROCESSED_S)
        finally:
            await run(box.close)
        self.drained_events += done
        return done

    async def stop(self, timeout_s: float) -> None:
        """Let the current event finish (bounded by ``timeout_s``), then stop."""
        self.closing = True
        self._wakeup.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=timeout_s)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
