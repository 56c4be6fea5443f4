"""Waiting for another connection's write lock: retried until it is free, a typed error after the timeout."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.checked import storage_driver
from lcm_framework.storage.models import NewMessage, Role

from .conftest import MakeFactory, db_path, ref


@contextmanager
def _locked_project(make_factory: MakeFactory, tmp_path: Path, busy_ms: int, hold_s: float) -> Iterator[Any]:
    """A project with one conversation, while another connection holds its write lock for ``hold_s``."""
    storage = make_factory(**{"storage.busy_timeout_ms": busy_ms}).open_project(ref())
    storage.conversations.create_conversation("s")
    held = threading.Event()

    def hold() -> None:
        blocker = sqlite3.connect(db_path(tmp_path, ref()), isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            blocker.execute("INSERT INTO meta (key, value) VALUES ('blocker', 'x')")
            held.set()
            time.sleep(hold_s)
            blocker.execute("COMMIT")
        finally:
            blocker.close()

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(5)
        yield storage
    finally:
        thread.join()
        storage.close()


@pytest.mark.parametrize("via", ["transaction", "repository call"])
def test_a_writer_waits_for_the_lock_then_writes(make_factory: MakeFactory, tmp_path: Path, via: str) -> None:
    with _locked_project(make_factory, tmp_path, busy_ms=5000, hold_s=0.3) as storage:
        conv = storage.conversations.list_conversations()[0]
        message = NewMessage(Role.USER, "after the lock", 1)
        started = time.monotonic()
        if via == "transaction":
            stored = storage.transaction(lambda repos: repos.conversations.append_messages(conv.conversation_id,
                                                                                            [message]))
        else:
            stored = storage.conversations.append_messages(conv.conversation_id, [message])
        assert time.monotonic() - started >= 0.1  # it did wait for the blocker's commit
        assert stored[0].seq == 0
        assert [m.content for m in storage.conversations.list_messages(conv.conversation_id)] == ["after the lock"]
        db = storage_driver(storage)._scope.db
        timeout = db.run(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0], "test")
        assert timeout == 5000  # restored after the retried BEGIN


def test_a_transaction_times_out_with_a_typed_error(make_factory: MakeFactory, tmp_path: Path) -> None:
    with _locked_project(make_factory, tmp_path, busy_ms=100, hold_s=1.0) as storage:
        ran: list[bool] = []
        started = time.monotonic()
        with pytest.raises(StorageUnavailableError) as info:
            storage.transaction(lambda repos: ran.append(True))
        assert info.value.code == "busy"
        assert ran == []
        assert 0.09 <= time.monotonic() - started < 0.9  # gave up at the timeout, not at the blocker's commit
    reopened = make_factory().open_project(ref())
    assert reopened.transaction(lambda repos: repos.conversations.list_conversations())[0].session_id == "s"
    reopened.close()
