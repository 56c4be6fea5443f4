"""One project's storage scope: the repositories, transactions, health, stats and close."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from lcm_framework.plugin_api import StorageError
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
    unsupported_passive_inbox,
)

from . import maintenance
from .context import SqliteContext
from .conversations import SqliteConversations
from .coordination import SqliteCoordination
from .errors import BACKEND
from .large_files import SqliteLargeFiles
from .memory import SqlitePromotedMemory
from .native import SqliteNativeTranscripts
from .recall import SqliteRecall
from .redaction import SqliteRedactionAdmin
from .scope import Scope
from .search import SqliteLexicalSearch
from .summaries import SqliteSummaries
from .vectors import SqliteVectors

T = TypeVar("T")


class SqliteRepositories:
    """The repositories bound to one scope (autocommit, or one transaction)."""

    def __init__(self, scope: Scope) -> None:
        self.conversations: ConversationRepository = SqliteConversations(scope)
        self.summaries: SummaryRepository = SqliteSummaries(scope)
        self.context: ContextRepository = SqliteContext(scope)
        self.large_files: LargeFileRepository = SqliteLargeFiles(scope)
        self.promoted_memory: PromotedMemoryRepository = SqlitePromotedMemory(scope)
        self.recall: RecallRepository = SqliteRecall(scope)
        self.lexical_search: LexicalSearchRepository = SqliteLexicalSearch(scope)
        self.redaction_admin: RedactionAdminRepository = SqliteRedactionAdmin(scope)
        self.coordination: CoordinationRepository = SqliteCoordination(scope)
        self.native_transcripts: NativeTranscriptRepository = SqliteNativeTranscripts(scope)
        self.passive_inbox: PassiveInboxRepository = unsupported_passive_inbox(BACKEND, scope.db.project_id)
        self.vectors: VectorRepository = SqliteVectors(scope)


class SqliteProjectStorage(SqliteRepositories):
    def __init__(self, scope: Scope, capabilities: Capabilities, path: Path,
                 on_close: Callable[[SqliteProjectStorage], None]) -> None:
        super().__init__(scope)
        self.project_id = scope.db.project_id
        self.capabilities = capabilities
        self._scope = scope
        self._path = path
        self._on_close = on_close

    def transaction(self, fn: Callable[[Repositories], T]) -> T:
        return self._scope.db.transaction(lambda token: fn(SqliteRepositories(self._scope.bound(token))))

    def prepare_writes(self, messages: Sequence[NewMessage], payloads: Sequence[tuple[str, NewMessage | None]]
                       ) -> None:
        self._scope.db.prepare(messages, payloads)

    def health(self) -> Health:
        db = self._scope.db
        if db.closed:
            return Health(BACKEND, ok=False, state="closed", project=self.project_id, domain="project")
        try:
            db.run(lambda conn: conn.execute("SELECT count(*) FROM meta").fetchone(), "project")
        except StorageError as exc:
            state = "closed" if db.closed else "unavailable"
            return Health(BACKEND, ok=False, state=state, project=self.project_id, domain=exc.domain, detail=exc.code)
        return Health(BACKEND, ok=True, state="ok", project=self.project_id, domain="project",
                      detail=f"full-text tier {self._scope.tier.value}")

    def stats(self) -> ProjectStats:
        with self._scope.db.op("stats") as conn:
            one = conn.execute(
                "SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages), "
                "(SELECT coalesce(sum(token_count), 0) FROM messages), (SELECT count(*) FROM large_files), "
                "(SELECT count(*) FROM subagent_links)"
            ).fetchone()
            by_depth = dict(conn.execute("SELECT depth, count(*) FROM summaries GROUP BY depth ORDER BY depth"))
            context_tokens = conn.execute(
                "SELECT coalesce(sum(coalesce(m.token_count, s.token_count, 0)), 0) FROM context_items ci "
                "LEFT JOIN messages m ON m.message_id = ci.message_id "
                "LEFT JOIN summaries s ON s.summary_id = ci.summary_id").fetchone()[0]
            redactions = dict(conn.execute("SELECT category, count FROM redaction_counts ORDER BY category"))
        return ProjectStats(conversations=one[0], messages=one[1], summaries_by_depth=by_depth,
                            message_tokens=one[2], context_tokens=context_tokens, large_files=one[3],
                            redactions=redactions, storage_bytes=self._size(), subagent_conversations=one[4])

    def _size(self) -> int:
        return maintenance.file_bytes(self._path)

    def storage_usage(self, *, payloads: bool = True) -> StorageUsage:
        return maintenance.usage(self._scope.db, self._path, payloads)

    def compact_storage(self, *, progress: Callable[[int], None] | None = None) -> MaintenanceReport:
        return maintenance.compact(self._scope.db, self._path, progress)

    def close(self) -> None:
        if not self._scope.db.closed:
            self._scope.db.close()
            self._on_close(self)
