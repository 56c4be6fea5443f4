"""One compaction at a time per conversation: an in-process lock plus a storage lease.

The lock serializes threads of one process (the daemon runs operations per
conversation in order); the lease (``compact:<conversation id>``) does the same
across processes and machines. Other conversations never wait.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import LcmError

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage
    from ..storage.models import Lease

LEASE_TTL_SECONDS = 120.0
_POLL_SECONDS = 0.05

_registry_lock = threading.Lock()
_locks: dict[tuple[str, int], threading.Lock] = {}


class CompactionBusy(LcmError):
    """Another process or thread is compacting this conversation."""


def conversation_lock(project_id: str, conversation_id: int) -> threading.Lock:
    with _registry_lock:
        return _locks.setdefault((project_id, conversation_id), threading.Lock())


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseKeeper:
    """Holds the compaction lease of one conversation and renews it during long work."""

    def __init__(self, storage: ProjectStorage, lease: Lease, ttl: float) -> None:
        self.storage = storage
        self.lease = lease
        self.ttl = ttl
        self._renewed = time.monotonic()

    def renew_if_due(self) -> None:
        """Renew once a third of the TTL has passed; ConflictError when the lease was lost."""
        if time.monotonic() - self._renewed >= self.ttl / 3:
            self.lease = self.storage.coordination.renew_lease(self.lease, self.ttl)
            self._renewed = time.monotonic()


@contextmanager
def exclusive(
    storage: ProjectStorage, conversation_id: int, *, wait_seconds: float, ttl: float = LEASE_TTL_SECONDS
) -> Iterator[LeaseKeeper]:
    """Hold the in-process lock and the lease; CompactionBusy when not granted within ``wait_seconds``."""
    deadline = time.monotonic() + wait_seconds
    lock = conversation_lock(storage.project_id, conversation_id)
    acquired = lock.acquire(timeout=wait_seconds) if wait_seconds > 0 else lock.acquire(blocking=False)
    if not acquired:
        raise CompactionBusy(f"conversation {conversation_id} is being compacted by another thread")
    try:
        name = f"compact:{conversation_id}"
        holder = holder_name()
        while True:
            lease = storage.coordination.acquire_lease(name, holder, ttl)
            if lease is not None:
                break
            if time.monotonic() >= deadline:
                raise CompactionBusy(f"conversation {conversation_id} is being compacted by another process")
            time.sleep(_POLL_SECONDS)
        keeper = LeaseKeeper(storage, lease, ttl)
        try:
            yield keeper
        finally:
            try:
                storage.coordination.release_lease(keeper.lease)
            except LcmError:
                pass  # lost or expired: the next holder already owns it
    finally:
        lock.release()
