"""Transcript import: the resumable native-transcript backfill behind ``lcm import`` and the hooks.

``import_sources`` imports files, directories or every client's default
roots; ``ingest_file`` imports what is new in one file (the agent hooks call
it on every turn). Both are idempotent and resumable; see ``docs/import.md``.
"""

from .api import import_sources, ingest_file, ingest_session, providers
from .errors import (
    CheckpointConflictError,
    IngestError,
    MessageMismatchError,
    QuarantineStoreError,
    SourceChangedError,
    SourceRefusedError,
    UnknownFormatError,
)
from .quarantine import QuarantineEntry, QuarantineStore, quarantine_path
from .report import ConversationTouched, FileError, FileReport, ImportReport, ProgressEvent

__all__ = [
    "CheckpointConflictError",
    "ConversationTouched",
    "FileError",
    "FileReport",
    "ImportReport",
    "IngestError",
    "MessageMismatchError",
    "ProgressEvent",
    "QuarantineEntry",
    "QuarantineStore",
    "QuarantineStoreError",
    "SourceChangedError",
    "SourceRefusedError",
    "UnknownFormatError",
    "import_sources",
    "ingest_file",
    "ingest_session",
    "providers",
    "quarantine_path",
]
