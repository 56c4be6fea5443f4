"""The daemon's outbox consumer through a backend outage: the pass stops at the first unavailable event (the
rest are not hammered), and once the backend is back every event the outage held up goes through in the
same pass, not at the end of its backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lcm_framework.daemon.consumer import OutboxConsumer
from lcm_framework.errors import StorageUnavailableError
from lcm_framework.outbox import Outbox, OutboxEvent, outbox_path


def test_an_outage_backlog_goes_through_as_soon_as_the_backend_is_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Outbox(outbox_path(home)) as box:
        for n in range(3):
            box.capture("Stop", {"n": n, "project": str(tmp_path)})
    backend = {"up": False}
    handled: list[int] = []

    async def handle(item: OutboxEvent, _box: Outbox) -> None:
        if not backend["up"]:
            raise StorageUnavailableError("the server is away", backend="postgresql", domain="test",
                                          code="unavailable")
        handled.append(item.seq)

    async def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    async def remote(_payload: Mapping[str, Any]) -> bool:
        return False

    consumer = OutboxConsumer(home, run, handle, str, lambda exc: str(getattr(exc, "code", "")), remote)
    assert asyncio.run(consumer.drain()) == 0
    assert asyncio.run(consumer.drain()) == 0  # the first event waits for its retry; the next one is tried
    with Outbox(outbox_path(home)) as box:
        assert [e.attempts for e in box.events()] == [1, 1, 0]  # one attempt per pass, the rest untouched
        box.capture("Stop", {"n": 3, "project": str(tmp_path)})
    assert consumer.unavailable is not None and consumer.unavailable.startswith("the server is away")
    backend["up"] = True
    assert asyncio.run(consumer.drain()) == 4  # the two held up by backoff too, at once
    assert sorted(handled) == [1, 2, 3, 4] and consumer.unavailable is None
    with Outbox(outbox_path(home)) as box:
        assert all(e.processed_at is not None for e in box.events())
