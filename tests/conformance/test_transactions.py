"""Transactions: commit, rollback, nesting, ended scopes, per-operation atomicity."""

from __future__ import annotations

import threading

import pytest

from lcm_framework.errors import ConflictError, LcmError, NestedTransactionError, StorageError
from lcm_framework.storage.contracts import ProjectStorage, Repositories
from lcm_framework.storage.models import NewMessage, Role


def test_commit_on_return(project: ProjectStorage) -> None:
    def work(tx: Repositories) -> int:
        conv = tx.conversations.create_conversation("tx")
        stored = tx.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "m", 1)])
        tx.context.append_messages(conv.conversation_id, [stored[0].message_id])
        tx.redaction_admin.add_counts({"aws": 2})
        return conv.conversation_id

    cid = project.transaction(work)
    assert project.conversations.message_count(cid) == 1
    assert len(project.context.list_items(cid)) == 1
    assert project.redaction_admin.get_counts() == {"aws": 2}


def test_rollback_everything_on_error(project: ProjectStorage) -> None:
    def work(tx: Repositories) -> None:
        conv = tx.conversations.create_conversation("tx")
        tx.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "m", 1)])
        tx.redaction_admin.add_counts({"aws": 2})
        raise RuntimeError("callback failed at /some/secret/path")

    with pytest.raises(StorageError) as info:
        project.transaction(work)
    assert "/some/secret/path" not in str(info.value)
    assert project.conversations.list_conversations() == []
    assert project.redaction_admin.get_counts() == {}


def test_storage_error_inside_is_reraised_as_is(project: ProjectStorage) -> None:
    project.conversations.create_conversation("pre")

    def work(tx: Repositories) -> None:
        tx.conversations.create_conversation("inside")
        conv = tx.conversations.create_conversation("dup")
        tx.conversations.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "a", 1, seq=0)])
        tx.conversations.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "b", 1, seq=0)])

    with pytest.raises(ConflictError):
        project.transaction(work)
    assert [c.session_id for c in project.conversations.list_conversations()] == ["pre"]


def test_lcm_error_from_callback_passes_through(project: ProjectStorage) -> None:
    class Custom(LcmError):
        pass

    def work(tx: Repositories) -> None:
        tx.conversations.create_conversation("x")
        raise Custom("stop")

    with pytest.raises(Custom):
        project.transaction(work)
    assert project.conversations.list_conversations() == []


def test_nested_transaction_rejected_immediately(project: ProjectStorage) -> None:
    seen: list[type[BaseException]] = []

    def outer(tx: Repositories) -> str:
        tx.conversations.create_conversation("outer")
        try:
            project.transaction(lambda inner: inner.conversations.create_conversation("inner"))
        except NestedTransactionError as exc:
            seen.append(type(exc))
        return "done"

    assert project.transaction(outer) == "done"
    assert seen == [NestedTransactionError]
    assert [c.session_id for c in project.conversations.list_conversations()] == ["outer"]


def test_transaction_repositories_unusable_after_the_callback(project: ProjectStorage) -> None:
    kept: list[Repositories] = []
    project.transaction(kept.append)
    with pytest.raises(StorageError):
        kept[0].conversations.create_conversation("late")
    assert project.conversations.list_conversations() == []


def test_failed_operation_inside_transaction_keeps_earlier_work(project: ProjectStorage) -> None:
    def work(tx: Repositories) -> None:
        conv = tx.conversations.create_conversation("c")
        tx.conversations.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "a", 1, seq=0)])
        with pytest.raises(ConflictError):
            tx.conversations.insert_messages(conv.conversation_id, [NewMessage(Role.USER, "b", 1, seq=1),
                                                                    NewMessage(Role.USER, "c", 1, seq=0)])

    project.transaction(work)
    (conv,) = project.conversations.list_conversations()
    assert [m.content for m in project.conversations.list_messages(conv.conversation_id)] == ["a"]


def test_concurrent_threads_wait_for_the_transaction(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("c")
    entered, release = threading.Event(), threading.Event()
    results: list[int] = []

    def work(tx: Repositories) -> None:
        tx.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "tx", 1)])
        entered.set()
        release.wait(5)

    def appender() -> None:
        entered.wait(5)
        stored = project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "other", 1)])
        results.append(stored[0].seq)

    worker = threading.Thread(target=appender)
    worker.start()
    holder = threading.Thread(target=lambda: project.transaction(work))
    holder.start()
    entered.wait(5)
    release.set()
    holder.join(10)
    worker.join(10)
    assert results == [1]
    assert [m.content for m in project.conversations.list_messages(conv.conversation_id)] == ["tx", "other"]


def test_many_threads_append_contiguously(project: ProjectStorage) -> None:
    conv = project.conversations.create_conversation("c")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(10):
                project.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "x", 1)] * 3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert [m.seq for m in project.conversations.list_messages(conv.conversation_id)] == list(range(120))
