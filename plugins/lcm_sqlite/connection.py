"""One project's SQLite connection: opening, locking, operations and transactions.

A ``Database`` owns one ``sqlite3`` connection shared by the threads that use
its ``ProjectStorage``; an ``RLock`` serializes them and is held for a whole
transaction. Every repository call runs inside ``op()``: outside a
transaction it is its own ``BEGIN``/``COMMIT`` (``BEGIN IMMEDIATE`` for
writes), inside one it is a savepoint, so multi-row operations stay atomic
either way. Driver exceptions are translated at this boundary.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from lcm_framework.plugin_api import LcmError, NestedTransactionError, StorageError, StorageUnavailableError
from lcm_framework.plugin_api.formats import NewMessage
from lcm_framework.plugin_api.sqlite import UnsafeDatabaseFile, open_private

from .codec import Codec
from .compact_layout import StringTable
from .encodings import Prepared
from .errors import BACKEND, closed, translate

T = TypeVar("T")
MMAP_BYTES = 256 * 2**20
"""Memory-mapped reads: full-text ranking touches many scattered pages, and mapping saves a syscall each."""
WAL_AUTOCHECKPOINT_PAGES = 4000
"""Checkpoint once the WAL holds this many pages (16 MiB; SQLite's default is 1000). While several
processes write, the WAL cannot restart, so past the threshold every commit runs a small checkpoint
with two fsyncs; a higher threshold gets there less often (a two-process import: 30% fewer fsyncs)."""
PAGE_BYTES = 2048
"""A new project database's page size. Every table and index takes at least one page, and a project has
45 that most hold a page or less of rows (summaries, memories, vectors, their full-text indexes): with
4 KiB pages they took 200 KiB of a 0.9 MB project. Values are stored in blocks of up to 256 KiB, so
smaller pages cost no row its overflow waste; but a message's vector row (about 270 bytes) fills a 1 KiB
page only to 80%. Stored bytes per transcript byte, semantic lane on, 4 / 2 / 1 KiB pages: one copy of
the real sessions 1.12 / 0.97 / 0.92, 5.8 MB of rewritten sessions 0.99 / 0.99 / 1.00, six projects of
1-3 MB 1.13 / 1.06 / 1.06; the import's CPU time the same. An older database keeps its page size until
``lcm vacuum`` (``maintenance._reclaim``)."""
WRITE_POLL_FIRST_S = 0.00025
"""Waiting for another connection's write lock, ``BEGIN IMMEDIATE`` is retried after 0.25 ms, then a
quarter longer each time. SQLite's own busy handler sleeps 1, 2, 5, 10, 15... ms between tries, so a
lock held 3 ms cost a waiter 8: two processes importing into one project idled 12% of the time."""
WRITE_POLL_MAX_S = 0.005
"""The longest sleep between two tries for the write lock."""


class TxToken:
    """Marks repositories bound to one transaction; inactive once it ended."""

    __slots__ = ("active", "thread")

    def __init__(self) -> None:
        self.active = True
        self.thread = threading.get_ident()


def connect(path: Path, busy_timeout_ms: int, *, domain: str, project: str | None) -> sqlite3.Connection:
    """Open (creating with mode 0600 if missing) the database file in WAL mode with foreign keys on.

    A symlinked database file is refused, and the path must still name the
    file SQLite opened. No descriptor of the file is ever opened here: closing
    one would drop the locks of every other connection of the process (see
    ``lcm_framework.sqlite_files``).
    """
    try:
        conn = open_private(path, busy_timeout_ms / 1000, page_size=PAGE_BYTES)
    except UnsafeDatabaseFile as exc:
        if exc.code == "path_changed":
            raise StorageUnavailableError("the database file changed while it was opened", backend=BACKEND,
                                          domain=domain, project=project, code="path_changed") from None
        raise StorageUnavailableError("the database file cannot be opened", backend=BACKEND, domain=domain,
                                      project=project, code="io_error") from None
    except OSError:
        raise StorageUnavailableError("the database file cannot be opened", backend=BACKEND, domain=domain,
                                      project=project, code="io_error") from None
    except sqlite3.Error as exc:
        raise translate(exc, domain, project) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        # A repository call inside a transaction runs in a savepoint, whose statement journal SQLite would
        # otherwise write to a file under /var/tmp (about 3 bytes per imported byte, a third of the I/O).
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
    except sqlite3.Error as exc:
        conn.close()
        raise translate(exc, domain, project) from None
    return conn


class Database:
    """A project's connection plus its lock, transaction state and error context."""

    def __init__(self, conn: sqlite3.Connection, project_id: str, busy_timeout_ms: int) -> None:
        self.project_id = project_id
        self._busy_timeout_ms = int(busy_timeout_ms)
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.RLock()
        self._tx_thread: int | None = None
        self._depth = 0
        self.codec = Codec()
        self.strings = StringTable()
        self.recent_texts: dict[int, str] = {}
        self.prepared = Prepared()
        self._function_error: StorageError | None = None
        conn.create_function("lcm_text", 2, lambda name, data: self._text(conn, name, data), deterministic=True)

    def _text(self, conn: sqlite3.Connection, name: str | None, data: str | bytes | None) -> str | bytes | None:
        """``lcm_text``: a stored text decoded. SQLite reports a function's exception as a bare driver error,
        so a typed one (a missing block, an altered dictionary) is kept for ``_translate`` to raise."""
        try:
            decoded: str | bytes | None = self.codec.decode(conn, name, data)
            return decoded
        except StorageError as exc:
            self._function_error = exc
            raise

    def _translate(self, exc: sqlite3.Error, domain: str) -> StorageError:
        """The error to raise for a driver error: the typed one an SQL function raised, else translated."""
        found, self._function_error = self._function_error, None
        return found if found is not None else translate(exc, domain, self.project_id)

    @property
    def closed(self) -> bool:
        return self._conn is None

    @contextmanager
    def op(self, domain: str, *, write: bool = False, token: TxToken | None = None) -> Iterator[sqlite3.Connection]:
        """Run one repository operation atomically; translate driver errors."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise closed(domain, self.project_id)
            if token is not None and (not token.active or token.thread != threading.get_ident()):
                raise StorageError("the transaction these repositories belong to has ended", backend=BACKEND,
                                   domain=domain, project=self.project_id, code="transaction_ended")
            self._function_error = None  # one an SQL function raised that nobody raised further is stale
            self._depth += 1
            name = f"lcm_op_{self._depth}"
            nested = conn.in_transaction
            try:
                if nested:
                    conn.execute(f"SAVEPOINT {name}")
                elif write:
                    self._begin_write(conn)
                else:
                    conn.execute("BEGIN")
                try:
                    yield conn
                except BaseException:
                    self.forget_cached()
                    if nested:
                        conn.execute(f"ROLLBACK TO {name}")
                        conn.execute(f"RELEASE {name}")
                    elif conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute(f"RELEASE {name}" if nested else "COMMIT")
            except sqlite3.Error as exc:
                self._abort_quietly(conn, nested)
                raise self._translate(exc, domain) from None
            finally:
                self._depth -= 1

    def _begin_write(self, conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE``, retried in short sleeps while another connection writes (see
        ``WRITE_POLL_FIRST_S``); after the busy timeout the driver's busy error propagates."""
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            deadline = time.monotonic() + self._busy_timeout_ms / 1000
            delay = WRITE_POLL_FIRST_S
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    left = deadline - time.monotonic()
                    if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or left <= 0:
                        raise
                time.sleep(min(delay, left))
                delay = min(delay * 1.25, WRITE_POLL_MAX_S)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")

    def forget_cached(self) -> None:
        """Drop what was cached from the database: a rolled-back write may have added to it."""
        self.codec = Codec()
        self.strings = StringTable()
        self.recent_texts = {}
        self.prepared = Prepared()

    def _abort_quietly(self, conn: sqlite3.Connection, nested: bool) -> None:
        self.forget_cached()
        if not nested and conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def transaction(self, fn: Callable[[TxToken], T]) -> T:
        """Run ``fn`` inside ``BEGIN IMMEDIATE``; commit on return, roll back and re-raise sanitized on error."""
        if self._tx_thread == threading.get_ident():
            raise NestedTransactionError("a transaction is already open on this project", backend=BACKEND,
                                         domain="transaction", project=self.project_id, code="nested")
        with self._lock:
            conn = self._conn
            if conn is None:
                raise closed("transaction", self.project_id)
            token = TxToken()
            self._tx_thread = token.thread
            try:
                self._begin_write(conn)
                result = fn(token)
                conn.execute("COMMIT")
                return result
            except BaseException as exc:
                self.forget_cached()
                live = self._conn
                if live is not None and live.in_transaction:
                    try:
                        live.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if isinstance(exc, sqlite3.Error):
                    raise self._translate(exc, "transaction") from None
                if isinstance(exc, LcmError) or not isinstance(exc, Exception):
                    raise
                raise StorageError(f"the transaction was rolled back after {type(exc).__name__}",
                                   backend=BACKEND, domain="transaction", project=self.project_id,
                                   code="transaction_aborted") from exc
            finally:
                token.active = False
                self._tx_thread = None
                self.prepared = Prepared()

    def prepare(self, messages: Sequence[NewMessage], payloads: Sequence[tuple[str, NewMessage | None]]) -> None:
        """Encode the next transaction's writes now (see ``encodings``), replacing what was prepared before;
        inside a transaction of this thread it does nothing (its encodings could use a dictionary that
        transaction trained and may still roll back)."""
        if self._tx_thread == threading.get_ident():
            return
        with self.op("prepare") as conn:
            self.codec.refresh(conn)
            prepared = Prepared()
            prepared.prepare(conn, self.codec, messages, payloads)
            self.prepared = prepared

    def run(self, fn: Callable[[sqlite3.Connection], T], domain: str) -> T:
        """Run ``fn`` with the raw connection outside any transaction (maintenance: migrations, probes)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise closed(domain, self.project_id)
            self._function_error = None
            try:
                return fn(conn)
            except sqlite3.Error as exc:
                self._abort_quietly(conn, False)
                raise self._translate(exc, domain) from None

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
