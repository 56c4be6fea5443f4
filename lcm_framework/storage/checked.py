"""The core's validating wrapper around every storage backend: the shared data rules run once, here.

``open_backend`` wraps the driver's factory in ``CheckedBackend``; every project scope it opens, and every
transaction's repositories, are ``CheckedRepositories``: one wrapper per repository contract, built from the
contract itself, whose methods run the rule the contract method declares (``@checks``, ``storage.call_rules``)
before calling the adapter's. An adapter therefore never validates arguments itself; it raises only what needs
its data (not found, conflicts, stored values out of range).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .call_rules import declared_rule
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
R = TypeVar("R")


class _Checked:
    """One repository of an adapter (``inner``) behind the rules of its contract, tagged by ``check``."""

    __slots__ = ("_check", "_inner")

    def __init__(self, inner: object, check: Validator) -> None:
        self._inner = inner
        self._check = check


def contract_methods(contract: type) -> dict[str, Callable[..., Any]]:
    """The public methods a repository contract declares, by name."""
    return {name: fn for name, fn in vars(contract).items() if inspect.isfunction(fn) and not name.startswith("_")}


def _guard(contract: type, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """``name`` on the wrapper: the declared rule (read at each call, so a test can plant one), then the
    adapter's method. A method without arguments needs no rule; one with arguments must declare one."""
    if declared_rule(method) is None:
        if list(inspect.signature(method).parameters) != ["self"]:
            raise TypeError(f"{contract.__name__}.{name} takes arguments but declares no rule: "
                            "decorate it with @checks(rule) (lcm_framework/storage/call_rules.py)")

        def passed(self: _Checked) -> Any:
            return getattr(self._inner, name)()
        call = passed
    else:
        def checked(self: _Checked, *args: Any, **kwargs: Any) -> Any:
            rule = declared_rule(method)
            if rule is not None:
                rule(self._check, *args, **kwargs)
            return getattr(self._inner, name)(*args, **kwargs)
        call = checked
    call.__name__ = call.__qualname__ = name
    call.__doc__ = method.__doc__
    return call


def _checked_class(contract: type) -> type[_Checked]:
    methods = {name: _guard(contract, name, fn) for name, fn in contract_methods(contract).items()}
    return type(f"Checked{contract.__name__}", (_Checked,), {"__slots__": (), "__doc__": contract.__doc__,
                                                             **methods})


CHECKED: dict[type, type[_Checked]] = {contract: _checked_class(contract) for contract in (
    ConversationRepository, SummaryRepository, ContextRepository, LargeFileRepository, PromotedMemoryRepository,
    RecallRepository, LexicalSearchRepository, RedactionAdminRepository, CoordinationRepository,
    NativeTranscriptRepository, PassiveInboxRepository, VectorRepository)}
"""The wrapper class of each repository contract (built once, at import)."""


def checked(contract: type, inner: R, check: Validator) -> R:
    """``inner`` (an adapter's repository implementing ``contract``) behind ``contract``'s rules, typed as
    ``inner`` is: only the contract's methods are reachable through it."""
    wrapped: Any = CHECKED[contract](inner, check)
    return wrapped


class CheckedRepositories:
    """The repositories of ``inner``, each behind its contract's rules (errors tagged with ``backend``,
    the repository's domain and the project)."""

    def __init__(self, inner: Repositories, backend: str, project_id: str) -> None:
        def v(domain: str) -> Validator:
            return Validator(backend, domain, project_id)

        self.conversations = checked(ConversationRepository, inner.conversations, v("conversations"))
        self.summaries = checked(SummaryRepository, inner.summaries, v("summaries"))
        self.context = checked(ContextRepository, inner.context, v("context"))
        self.large_files = checked(LargeFileRepository, inner.large_files, v("large_files"))
        self.promoted_memory = checked(PromotedMemoryRepository, inner.promoted_memory, v("promoted_memory"))
        self.recall = checked(RecallRepository, inner.recall, v("recall"))
        self.lexical_search = checked(LexicalSearchRepository, inner.lexical_search, v("lexical_search"))
        self.redaction_admin = checked(RedactionAdminRepository, inner.redaction_admin, v("redaction_admin"))
        self.coordination = checked(CoordinationRepository, inner.coordination, v("coordination"))
        self.native_transcripts = checked(NativeTranscriptRepository, inner.native_transcripts,
                                          v("native_transcripts"))
        self.passive_inbox = checked(PassiveInboxRepository, inner.passive_inbox, v("passive_inbox"))
        self.vectors = checked(VectorRepository, inner.vectors, v("vectors"))


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
