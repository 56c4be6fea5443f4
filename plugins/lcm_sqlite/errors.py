"""Translate ``sqlite3`` exceptions into sanitized LCM storage errors.

The resulting messages are fixed text chosen here: never the database path,
SQL text, bound values or the driver's own message.
"""

from __future__ import annotations

import sqlite3

from lcm_framework.plugin_api import (
    ConflictError,
    DataValidationError,
    NotFoundError,
    StorageClosedError,
    StorageError,
    StorageUnavailableError,
)
from lcm_framework.plugin_api.sqlite import CORRUPT_CODES

BACKEND = "sqlite"
_CORRUPT_TEXT = ("database disk image is malformed", "file is not a database")


def translate(exc: sqlite3.Error, domain: str, project: str | None) -> StorageError:
    """Map a driver exception to the matching StorageError subclass (the raw message is only inspected)."""
    raw = str(exc).lower()

    def make(cls: type[StorageError], message: str, code: str) -> StorageError:
        return cls(message, backend=BACKEND, domain=domain, project=project, code=code)

    if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in CORRUPT_CODES or any(p in raw for p in _CORRUPT_TEXT):
        return make(StorageUnavailableError, "the database file is damaged or not a database", "corrupt")
    if isinstance(exc, sqlite3.IntegrityError):
        if "unique" in raw or "primary key" in raw:
            return make(ConflictError, "a row with the same identity already exists", "duplicate")
        if "foreign key" in raw:
            return make(NotFoundError, "a referenced row does not exist", "missing_reference")
        return make(DataValidationError, "a stored-data constraint was violated", "constraint")
    if isinstance(exc, sqlite3.ProgrammingError) and "closed" in raw:
        return make(StorageClosedError, "the project storage is closed", "closed")
    if isinstance(exc, sqlite3.OperationalError):
        if "locked" in raw or "busy" in raw:
            return make(StorageUnavailableError, "the database is busy (timed out waiting)", "busy")
        if "readonly" in raw or "read-only" in raw:
            return make(StorageUnavailableError, "the database is read-only", "read_only")
        if "disk" in raw or "full" in raw or "unable to open" in raw or "i/o" in raw:
            return make(StorageUnavailableError, "the database file cannot be used", "io_error")
    return make(StorageError, "the storage operation failed", "driver_error")


def closed(domain: str, project: str | None) -> StorageClosedError:
    return StorageClosedError("the project storage is closed", backend=BACKEND, domain=domain, project=project,
                              code="closed")
