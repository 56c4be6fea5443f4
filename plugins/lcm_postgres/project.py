"""One project's PostgreSQL storage scope: repositories, transactions, health, stats."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from lcm_framework.plugin_api import LcmError, NestedTransactionError, StorageClosedError, StorageError
from lcm_framework.plugin_api.formats import NewMessage
from lcm_framework.plugin_api.storage import (
    Capabilities,
    ContextRepository,
    ConversationRepository,
    CoordinationRepository,
    Health,
    LargeFileRepository,
    LexicalSearchRepository,
    MaintenanceReport,
    NativeTranscriptRepository,
    PassiveInboxRepository,
    ProjectStats,
    PromotedMemoryRepository,
    RecallRepository,
    RedactionAdminRepository,
    Repositories,
    StorageUsage,
    SummaryRepository,
    VectorRepository,
)

from .errors import BACKEND, translate
from .repos.admin import PgRedactionAdmin
from .repos.context import PgContext
from .repos.conversations import PgConversations
from .repos.coordination import PgCoordination
from .repos.files import PgLargeFiles
from .repos.inbox import PgPassiveInbox
from .repos.memory import PgMemory, PgRecall
from .repos.native import PgNativeTranscripts
from .repos.search import PgSearch
from .repos.summaries import PgSummaries
from .repos.vectors import PgVectors
from .runtime import Executor, PoolExecutor, Runtime

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")


def closed(domain: str, project: str | None) -> StorageClosedError:
    return StorageClosedError("the project storage is closed", backend=BACKEND, domain=domain, project=project,
                              code="closed")


class PgRepositories:
    """The repositories of one project bound to one executor."""

    def __init__(self, executor: Executor, project_id: str) -> None:
        self.conversations: ConversationRepository = PgConversations(executor, project_id)
        self.summaries: SummaryRepository = PgSummaries(executor, project_id)
        self.context: ContextRepository = PgContext(executor, project_id)
        self.large_files: LargeFileRepository = PgLargeFiles(executor, project_id)
        self.promoted_memory: PromotedMemoryRepository = PgMemory(executor, project_id)
        self.recall: RecallRepository = PgRecall(executor, project_id)
        self.lexical_search: LexicalSearchRepository = PgSearch(executor, project_id)
        self.redaction_admin: RedactionAdminRepository = PgRedactionAdmin(executor, project_id)
        self.coordination: CoordinationRepository = PgCoordination(executor, project_id)
        self.native_transcripts: NativeTranscriptRepository = PgNativeTranscripts(executor, project_id)
        self.passive_inbox: PassiveInboxRepository = PgPassiveInbox(executor, project_id)
        self.vectors: VectorRepository = PgVectors(executor, project_id)


class ScopedPoolExecutor(PoolExecutor):
    """Pool executor that refuses work once its project is closed."""

    def __init__(self, runtime: Runtime, project: str, is_closed: Callable[[], bool]) -> None:
        super().__init__(runtime, project)
        self._is_closed = is_closed

    @contextmanager
    def cursor(self, domain: str) -> Iterator[Any]:
        if self._is_closed():
            raise closed(domain, self.project)
        with super().cursor(domain) as cur:
            yield cur


class BoundExecutor:
    """The executor of one ``transaction()`` call: savepoints on its connection, dead after it ends."""

    def __init__(self, conn: psycopg.Connection[Any], project: str) -> None:
        self.conn: psycopg.Connection[Any] | None = conn
        self.project: str | None = project

    @contextmanager
    def cursor(self, domain: str) -> Iterator[Any]:
        import psycopg

        conn = self.conn
        if conn is None:
            raise StorageError("the transaction these repositories were bound to has ended", backend=BACKEND,
                               domain=domain, project=self.project, code="transaction_ended")
        try:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
        except psycopg.Error as exc:
            raise translate(exc, domain=domain, project=self.project) from None


_PAYLOAD_SIZES = (
    "(SELECT coalesce(sum(octet_length(payload_json)), 0) FROM native_transcripts WHERE project_id = %(p)s) "
    "+ (SELECT coalesce(sum(octet_length(raw_json)), 0) FROM message_parts WHERE project_id = %(p)s), "
    "(SELECT coalesce(sum(pg_column_size(payload_json)), 0) FROM native_transcripts WHERE project_id = %(p)s) "
    "+ (SELECT coalesce(sum(pg_column_size(raw_json)), 0) FROM message_parts WHERE project_id = %(p)s)")
"""This project's payloads, plain (``octet_length``) and as stored (``pg_column_size``)."""


class PostgresProjectStorage(PgRepositories):
    def __init__(self, runtime: Runtime, project_id: str, capabilities: Capabilities,
                 on_close: Callable[[PostgresProjectStorage], None]) -> None:
        self.project_id = project_id
        self.capabilities = capabilities
        self._runtime = runtime
        self._closed = False
        self._on_close = on_close
        self._tx = threading.local()
        self._executor = ScopedPoolExecutor(runtime, project_id, lambda: self._closed)
        super().__init__(self._executor, project_id)

    def transaction(self, fn: Callable[[Repositories], T]) -> T:
        import psycopg

        if getattr(self._tx, "active", False):
            raise NestedTransactionError("a transaction is already open on this project", backend=BACKEND,
                                         domain="transaction", project=self.project_id, code="nested")
        if self._closed:
            raise closed("transaction", self.project_id)
        self._tx.active = True
        try:
            with self._runtime.connection("transaction", self.project_id) as conn:
                executor = BoundExecutor(conn, self.project_id)
                try:
                    with conn.transaction():
                        return fn(PgRepositories(executor, self.project_id))
                except psycopg.Error as exc:
                    raise translate(exc, domain="transaction", project=self.project_id) from None
                except LcmError:
                    raise
                except Exception as exc:
                    raise StorageError(f"the transaction was rolled back after {type(exc).__name__}",
                                       backend=BACKEND, domain="transaction", project=self.project_id,
                                       code="transaction_aborted") from exc
                finally:
                    executor.conn = None
        finally:
            self._tx.active = False

    def prepare_writes(self, messages: Sequence[NewMessage], payloads: Sequence[tuple[str, NewMessage | None]]
                       ) -> None:
        """Nothing to encode ahead: the server compresses (TOAST) and rows lock, not the whole project."""

    def health(self) -> Health:
        if self._closed:
            return Health(BACKEND, ok=False, state="closed", project=self.project_id, domain="project")
        try:
            with self._executor.cursor("project") as cur:
                cur.execute("SELECT 1")
        except StorageError as exc:
            state = "closed" if self._closed else "unavailable"
            return Health(BACKEND, ok=False, state=state, project=self.project_id, domain=exc.domain,
                          detail=exc.code)
        return Health(BACKEND, ok=True, state="ok", project=self.project_id, domain="project",
                      detail="full-text tier postgres")

    def stats(self) -> ProjectStats:
        p = self.project_id
        with self._executor.cursor("project") as cur:
            cur.execute(
                "SELECT (SELECT count(*) FROM conversations WHERE project_id = %(p)s), "
                "(SELECT count(*) FROM messages WHERE project_id = %(p)s), "
                "(SELECT coalesce(sum(token_count), 0) FROM messages WHERE project_id = %(p)s), "
                "(SELECT count(*) FROM large_files WHERE project_id = %(p)s), "
                "(SELECT count(*) FROM subagent_links WHERE project_id = %(p)s), "
                "(SELECT coalesce(sum(coalesce(m.token_count, s.token_count, 0)), 0) FROM context_items ci "
                " LEFT JOIN messages m ON m.message_id = ci.message_id LEFT JOIN summaries s "
                " ON s.project_id = ci.project_id AND s.summary_id = ci.summary_id WHERE ci.project_id = %(p)s)",
                {"p": p},
            )
            conversations, messages, tokens, files, subagents, context_tokens = cur.fetchone()
            cur.execute("SELECT depth, count(*) FROM summaries WHERE project_id = %s GROUP BY depth ORDER BY depth",
                        (p,))
            by_depth = {int(d): int(n) for d, n in cur.fetchall()}
            cur.execute("SELECT category, count FROM redaction_counts WHERE project_id = %s ORDER BY category", (p,))
            redactions = {c: int(n) for c, n in cur.fetchall()}
        return ProjectStats(conversations=int(conversations), messages=int(messages),
                            summaries_by_depth=by_depth, message_tokens=int(tokens),
                            context_tokens=int(context_tokens), large_files=int(files), redactions=redactions,
                            subagent_conversations=int(subagents))

    def storage_usage(self, *, payloads: bool = True) -> StorageUsage:
        """Table and index sizes are the schema's, shared by every project (``shared``); payload sizes are
        this project's, plain (``octet_length``) and as stored (``pg_column_size``: TOAST-compressed)."""
        p = self.project_id
        with self._executor.cursor("storage") as cur:
            cur.execute("SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'i', 't') ORDER BY 2 DESC")
            objects = {name: int(size) for name, size in cur.fetchall() if size}
            sizes = _PAYLOAD_SIZES if payloads else "0, 0"
            cur.execute(f"SELECT {sizes}, (SELECT count(*) FROM messages WHERE project_id = %(p)s), "
                        "(SELECT coalesce(sum(byte_offset), 0) FROM ingest_checkpoints WHERE project_id = %(p)s)",
                        {"p": p})
            plain, stored, messages, transcript = cur.fetchone()
        return StorageUsage(objects=objects, total_bytes=sum(objects.values()), free_bytes=0,
                            messages=int(messages), payload_bytes=int(plain), stored_payload_bytes=int(stored),
                            transcript_bytes=int(transcript), shared=True)

    def compact_storage(self, *, progress: Callable[[int], None] | None = None) -> MaintenanceReport:
        """Nothing to do from here: PostgreSQL's autovacuum gives space back, TOAST compresses payloads."""
        size = self.storage_usage(payloads=False).total_bytes
        return MaintenanceReport(recompressed=0, bytes_before=size, bytes_after=size,
                                 detail="PostgreSQL: autovacuum maintains the tables; nothing to rewrite")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_close(self)
