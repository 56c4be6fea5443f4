"""The core's validating wrapper around every storage backend: the shared data rules run once, here.

``open_backend`` wraps the driver's factory in ``CheckedBackend``; every project scope it opens, and every
transaction's repositories, check each call's arguments with ``call_rules.RULES`` before the adapter sees
them. An adapter therefore never validates arguments itself; it raises only what needs its data (not
found, conflicts, stored values out of range).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .call_rules import RULES, Rule
from .contracts import (
    Capabilities,
    ContextRepository,
    ConversationRepository,
    CoordinationRepository,
    LargeFileRepository,
    LexicalSearchRepository,
    NativeTranscriptRepository,
    PassiveInboxRepository,
    ProjectStorage,
    PromotedMemoryRepository,
    RecallRepository,
    RedactionAdminRepository,
    Repositories,
    StorageBackendFactory,
    SummaryRepository,
    VectorRepository,
)
from .models import Health, MaintenanceReport, NewMessage, ProjectRef, ProjectStats, StorageUsage
from .validation import Validator

T = TypeVar("T")


class _CheckedRepository:
    """One repository whose guarded methods run their rule first; bound methods are cached per name."""

    def __init__(self, inner: object, check: Validator, rules: dict[str, Rule | None]) -> None:
        self._inner = inner
        self._check = check
        self._rules = rules

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        rule = self._rules.get(name)
        if rule is not None:
            target = _guarded(rule, self._check, target)
        setattr(self, name, target)
        return target


def _guarded(rule: Rule, check: Validator, target: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        rule(check, *args, **kwargs)
        return target(*args, **kwargs)

    call.__name__ = getattr(target, "__name__", "call")
    call.__doc__ = getattr(target, "__doc__", None)
    return call


class CheckedRepositories:
    """The twelve repositories of ``inner``, each behind its domain's rules (errors tagged with ``backend``/project)."""

    conversations: ConversationRepository
    summaries: SummaryRepository
    context: ContextRepository
    large_files: LargeFileRepository
    promoted_memory: PromotedMemoryRepository
    recall: RecallRepository
    lexical_search: LexicalSearchRepository
    redaction_admin: RedactionAdminRepository
    coordination: CoordinationRepository
    native_transcripts: NativeTranscriptRepository
    passive_inbox: PassiveInboxRepository
    vectors: VectorRepository

    def __init__(self, inner: Repositories, backend: str, project_id: str) -> None:
        for domain, rules in RULES.items():
            checked = _CheckedRepository(getattr(inner, domain), Validator(backend, domain, project_id), rules)
            setattr(self, domain, checked)


class CheckedProjectStorage(CheckedRepositories):
    """A ``ProjectStorage`` whose repository calls (in autocommit and in transactions) are validated first;
    ``driver`` is the adapter's own."""

    def __init__(self, driver: ProjectStorage) -> None:
        self.project_id = driver.project_id
        self.capabilities: Capabilities = driver.capabilities
        self.driver = driver
        super().__init__(driver, self.capabilities.backend, self.project_id)

    def transaction(self, fn: Callable[[Repositories], T]) -> T:
        backend, project = self.capabilities.backend, self.project_id
        return self.driver.transaction(lambda repos: fn(CheckedRepositories(repos, backend, project)))

    def prepare_writes(self, messages: Sequence[NewMessage], payloads: Sequence[tuple[str, NewMessage | None]]
                       ) -> None:
        self.driver.prepare_writes(messages, payloads)  # a hint: the transaction's calls are checked

    def health(self) -> Health:
        return self.driver.health()

    def stats(self) -> ProjectStats:
        return self.driver.stats()

    def storage_usage(self, *, payloads: bool = True) -> StorageUsage:
        return self.driver.storage_usage(payloads=payloads)

    def compact_storage(self, *, progress: Callable[[int], None] | None = None) -> MaintenanceReport:
        return self.driver.compact_storage(progress=progress)

    def close(self) -> None:
        self.driver.close()


class CheckedBackend:
    """A ``StorageBackendFactory`` whose project scopes validate every call; ``driver`` is the adapter's own."""

    def __init__(self, driver: StorageBackendFactory) -> None:
        self.driver = driver
        self.name = driver.name
        self.capabilities = driver.capabilities

    def open_project(self, project: ProjectRef) -> CheckedProjectStorage:
        return CheckedProjectStorage(self.driver.open_project(project))

    def open_existing_project(self, project: ProjectRef) -> CheckedProjectStorage | None:
        found = self.driver.open_existing_project(project)
        return None if found is None else CheckedProjectStorage(found)

    def list_projects(self) -> list[ProjectRef]:
        return self.driver.list_projects()

    def health(self) -> Health:
        return self.driver.health()

    def check_integrity(self) -> list[Health]:
        return self.driver.check_integrity()

    def close(self) -> None:
        self.driver.close()


def storage_driver(storage: StorageBackendFactory | ProjectStorage) -> object:
    """The adapter's own factory (or project scope) behind the core's wrapper, for the plugin that provides it
    (its commands, its tests); ``storage`` itself when it is not wrapped."""
    return storage.driver if isinstance(storage, CheckedBackend | CheckedProjectStorage) else storage
