"""One ProjectStorage shared by many worker threads (as the daemon and MCP server use it)."""

from __future__ import annotations

import threading

from lcm_framework.errors import NestedTransactionError
from lcm_framework.storage.models import NewMemory, NewMessage, Role, SearchQuery

from .conftest import MakeFactory, ref


def test_mixed_workload_from_many_threads(make_factory: MakeFactory) -> None:
    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        start.wait()
        for i in range(15):
            stored = storage.conversations.append_messages(
                conv.conversation_id, [NewMessage(Role.USER, f"thread {n} note {i} searchable", 1)])
            storage.context.append_messages(conv.conversation_id, [stored[0].message_id])

    def transactor(n: int) -> None:
        start.wait()
        for i in range(10):
            storage.transaction(lambda tx, i=i: (
                tx.promoted_memory.create_memory(NewMemory(f"memory {n}-{i}")),
                tx.redaction_admin.add_counts({"k": 1}),
            ))

    def reader(_: int) -> None:
        start.wait()
        for _ in range(20):
            storage.lexical_search.search(SearchQuery("searchable"))
            storage.context.token_total(conv.conversation_id)
            storage.stats()

    def run(fn, n: int) -> None:  # type: ignore[no-untyped-def]
        try:
            fn(n)
        except BaseException as exc:  # pragma: no cover - reported by the assertion below
            errors.append(exc)

    roles = [writer, writer, writer, transactor, transactor, reader, reader, reader]
    threads = [threading.Thread(target=run, args=(fn, n)) for n, fn in enumerate(roles)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    messages = storage.conversations.list_messages(conv.conversation_id)
    assert [m.seq for m in messages] == list(range(45))
    assert [i.ordinal for i in storage.context.list_items(conv.conversation_id)] == list(range(45))
    assert len(storage.promoted_memory.list_memories()) == 20
    assert storage.redaction_admin.get_counts() == {"k": 20}
    assert len(storage.lexical_search.search(SearchQuery("searchable", limit=None))) == 45


def test_a_transaction_in_one_thread_is_not_nested_for_another(make_factory: MakeFactory) -> None:
    storage = make_factory().open_project(ref())
    inside, results = threading.Event(), []

    def long_tx(tx) -> None:  # type: ignore[no-untyped-def]
        tx.redaction_admin.add_counts({"a": 1})
        inside.set()
        threading.Event().wait(0.2)

    def other() -> None:
        inside.wait(5)
        try:
            storage.transaction(lambda tx: tx.redaction_admin.add_counts({"b": 1}))
            results.append("ok")
        except NestedTransactionError:  # pragma: no cover - the failure being tested against
            results.append("nested")

    t = threading.Thread(target=other)
    t.start()
    storage.transaction(long_tx)
    t.join(10)
    assert results == ["ok"]
    assert storage.redaction_admin.get_counts() == {"a": 1, "b": 1}


def test_closing_while_threads_work_fails_them_cleanly(make_factory: MakeFactory) -> None:
    from lcm_framework.errors import StorageClosedError

    storage = make_factory().open_project(ref())
    conv = storage.conversations.create_conversation("s")
    outcomes: list[str] = []
    go = threading.Event()

    def worker() -> None:
        go.wait(5)
        try:
            for _ in range(200):
                storage.conversations.append_messages(conv.conversation_id, [NewMessage(Role.USER, "x", 1)])
            outcomes.append("finished")
        except StorageClosedError:
            outcomes.append("closed")

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    go.set()
    threading.Event().wait(0.02)
    storage.close()
    for t in threads:
        t.join(10)
    assert len(outcomes) == 3 and set(outcomes) <= {"finished", "closed"}
