"""Waiting for another connection's write lock: retried until it is free, a typed error after the timeout."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from lcm_framework.errors import StorageUnavailableError
from lcm_framework.storage.models import NewMessage, Role

from .conftest import MakeFactory, db_path, ref


def _hold_write_lock(path: Path, seconds: float, held: threading.Event) -> threading.Thread:
    def hold() -> None:
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            blocker.execute("INSERT INTO meta (key, value) VALUES ('blocker', 'x')")
            held.set()
            time.sleep(seconds)
            blocker.execute("COMMIT")
        finally:
            blocker.close()

    thread = threading.Thread(target=hold)
    thread.start()
    return thread


@pytest.mark.parametrize("via", ["transaction", "repository call"])
def test_a_writer_waits_for_the_lock_then_writes(make_factory: MakeFactory, tmp_path: Path, via: str) -> None:
    storage = make_factory(**{"storage.busy_timeout_ms": 5000}).open_project(ref())
    conv = storage.conversations.create_conversation("s")
    held = threading.Event()
    thread = _hold_write_lock(db_path(tmp_path, ref()), 0.3, held)
    try:
        assert held.wait(5)
        started = time.monotonic()
        message = NewMessage(Role.USER, "after the lock", 1)
        if via == "transaction":
            stored = storage.transaction(lambda repos: repos.conversations.append_messages(conv.conversation_id,
                                                                                            [message]))
        else:
            stored = storage.conversations.append_messages(conv.conversation_id, [message])
        assert time.monotonic() - started >= 0.1  # it did wait for the blocker's commit
    finally:
        thread.join()
    assert [m.content for m in storage.conversations.list_messages(conv.conversation_id)] == ["after the lock"]
    assert stored[0].seq == 0
    timeout = storage._scope.db.run(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0], "test")
    assert timeout == 5000  # restored after the polled BEGIN
    storage.close()


def test_a_transaction_times_out_with_a_typed_error(make_factory: MakeFactory, tmp_path: Path) -> None:
    storage = make_factory(**{"storage.busy_timeout_ms": 100}).open_project(ref())
    conv = storage.conversations.create_conversation("s")
    held = threading.Event()
    thread = _hold_write_lock(db_path(tmp_path, ref()), 1.0, held)
    try:
        assert held.wait(5)
        started = time.monotonic()
        ran: list[bool] = []
        with pytest.raises(StorageUnavailableError) as info:
            storage.transaction(lambda repos: ran.append(True))
        assert info.value.code == "busy"
        assert ran == []
        assert 0.09 <= time.monotonic() - started < 0.9  # gave up at the timeout, not at the blocker's commit
    finally:
        thread.join()
    assert storage.transaction(lambda repos: repos.conversations.get_conversation(conv.conversation_id)) == conv
    storage.close()
