"""Typed, sanitized errors of the transcript backfill.

Messages name the source by its client-root-relative locator and a reason
code; they never carry record payloads, secrets or database details.
"""

from __future__ import annotations

from ..errors import TranscriptError


class IngestError(TranscriptError):
    """A transcript source could not be imported. ``code`` is a stable machine-readable reason."""

    code = "ingest_error"

    def __init__(self, message: str, *, locator: str | None = None, code: str | None = None) -> None:
        self.locator = locator
        if code is not None:
            self.code = code
        super().__init__(f"{locator}: {message}" if locator else message)


class SourceRefusedError(IngestError):
    """The path is not an acceptable source (symlink leaf, outside its root, not a regular file)."""

    code = "source_refused"


class SourceChangedError(IngestError):
    """The bound source changed (identity, size, times or bytes) while it was being imported."""

    code = "source_changed"


class UnknownFormatError(IngestError):
    """No registered transcript format recognizes the file's content."""

    code = "unknown_format"


class MessageMismatchError(IngestError):
    """A stored message at the expected session position differs from the transcript (fails closed)."""

    code = "message_mismatch"


class CheckpointConflictError(IngestError):
    """Another writer kept advancing the same source; retries were exhausted."""

    code = "checkpoint_conflict"


class QuarantineStoreError(IngestError):
    """The local quarantine store is unusable (schema drift, unsupported version, unwritable)."""

    code = "quarantine_store"
