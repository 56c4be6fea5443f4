"""Typed, sanitized errors shared by every LCM component.

Every error names what failed (backend, project, domain, reason code) and
never carries a database path, URL, credential, SQL text, bound value or raw
driver message. Adapters translate driver exceptions into these types at
their boundary.
"""

from __future__ import annotations


class LcmError(Exception):
    """Base class of every error LCM raises on purpose."""

    exit_code = 1


class ConfigError(LcmError):
    """A configuration key or value was refused."""

    exit_code = 2


class PluginError(LcmError):
    """A plugin failed to load or registered something invalid."""


class StorageError(LcmError):
    """A storage operation failed. Carries only sanitized identity fields."""

    def __init__(
        self,
        message: str,
        *,
        backend: str,
        domain: str,
        project: str | None = None,
        code: str = "storage_error",
    ) -> None:
        self.backend = backend
        self.domain = domain
        self.project = project
        self.code = code
        where = f"{backend}/{domain}" + (f" project={project}" if project else "")
        super().__init__(f"{message} [{where}; {code}]")


class StorageUnavailableError(StorageError):
    """The backend cannot serve operations (server down, file unreadable, closed)."""


class StorageClosedError(StorageUnavailableError):
    """The project scope or factory was closed."""


class DataValidationError(StorageError):
    """Input broke a data rule (U+0000, integer range, bad enum) before any database access."""


class NotFoundError(StorageError):
    """A referenced row does not exist."""


class ConflictError(StorageError):
    """A uniqueness, compare-and-swap or fencing check failed."""


class NestedTransactionError(StorageError):
    """A transaction was started inside another transaction."""


class UnsupportedCapabilityError(StorageError):
    """An optional operation the selected backend does not provide."""


class TranscriptError(LcmError):
    """A transcript could not be read or mapped."""


class ScrubberError(LcmError):
    """The scrubber could not be built (invalid or structural-key pattern)."""


class SummarizerError(LcmError):
    """A summarizer failed; compaction falls back down the escalation ladder."""


class SummarizerUnavailableError(SummarizerError):
    """The summarizer's service gave no answer (transport, authentication, quota, timeout).

    Compaction then uses the offline summarizer for the rest of the run instead of writing truncations.
    """
