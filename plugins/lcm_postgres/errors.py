"""Translate psycopg errors into sanitized LCM storage errors.

Only the SQLSTATE (its class and code), backend, project and domain leave
this module: never SQL text, bound values, URLs, credentials or driver text.
"""

from __future__ import annotations

from lcm_framework.plugin_api import (
    ConflictError,
    DataValidationError,
    NotFoundError,
    StorageError,
    StorageUnavailableError,
)

BACKEND = "postgresql"

# SQLSTATE classes meaning "the server cannot serve us right now".
_UNAVAILABLE_CLASSES = {"08", "53", "57", "58", "XX"}


def sqlstate_of(exc: BaseException) -> str | None:
    return getattr(exc, "sqlstate", None)


_CORRUPT_STATES = frozenset({"XX001", "XX002"})  # data_corrupted, index_corrupted


def translate(exc: BaseException, *, domain: str, project: str | None) -> StorageError:
    """A typed StorageError for ``exc`` (a psycopg or pool error); keeps only the SQLSTATE."""
    import psycopg
    from psycopg_pool import PoolTimeout

    if isinstance(exc, StorageError):
        return exc
    state = sqlstate_of(exc) or ""
    sqlclass = state[:2]

    def make(kind: type[StorageError], message: str, code: str) -> StorageError:
        return kind(message, backend=BACKEND, domain=domain, project=project, code=code)

    if isinstance(exc, PoolTimeout):
        return make(StorageUnavailableError,
                    "no PostgreSQL connection available (server down or pool exhausted)",
                    "unavailable")
    if isinstance(exc, psycopg.OperationalError) and not state:
        return make(StorageUnavailableError,
                    "PostgreSQL is unreachable",
                    "unavailable")
    if state in _CORRUPT_STATES:
        return make(StorageUnavailableError, f"PostgreSQL reports damaged data (SQLSTATE {state})", "corrupt")
    if state == "57014":
        return make(StorageUnavailableError,
                    "PostgreSQL cancelled the statement (timeout or cancel)",
                    "sqlstate_57014")
    if sqlclass in _UNAVAILABLE_CLASSES or isinstance(exc, psycopg.InterfaceError):
        return make(StorageUnavailableError,
                    f"PostgreSQL is unavailable (SQLSTATE class {sqlclass or '??'})",
                    f"sqlstate_{state or 'none'}")
    if state == "23505" or sqlclass == "40":
        return make(ConflictError,
                    f"PostgreSQL refused a conflicting write (SQLSTATE {state})",
                    f"sqlstate_{state}")
    if state == "23503":
        return make(NotFoundError,
                    "a referenced row does not exist (SQLSTATE 23503)",
                    "sqlstate_23503")
    if sqlclass in {"22", "23", "2F"}:
        return make(DataValidationError,
                    f"PostgreSQL refused the data (SQLSTATE {state})",
                    f"sqlstate_{state}")
    if sqlclass == "42" and state in {"42501"}:
        return make(StorageUnavailableError,
                    "the PostgreSQL role lacks a required privilege (SQLSTATE 42501)",
                    "sqlstate_42501")
    return make(StorageError,
                    f"PostgreSQL operation failed (SQLSTATE class {sqlclass or '??'})",
                    f"sqlstate_{state or 'none'}")
