"""What every repository is bound to: the project database, the active tier and maybe a transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar

from lcm_framework.errors import ConflictError, DataValidationError, NotFoundError
from lcm_framework.storage.contracts import FullTextTier
from lcm_framework.storage.validation import Validator, effective_limit

from .connection import Database, TxToken
from .errors import BACKEND


@dataclass(frozen=True, slots=True)
class Scope:
    db: Database
    tier: FullTextTier
    regex: bool
    token: TxToken | None = None

    def bound(self, token: TxToken) -> Scope:
        return Scope(self.db, self.tier, self.regex, token)


class Repository:
    """Base of the domain repositories: validation, operations and typed errors for one domain."""

    domain: ClassVar[str]

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._check = Validator(BACKEND, self.domain, scope.db.project_id)

    def _op(self, *, write: bool = False) -> AbstractContextManager[sqlite3.Connection]:
        return self._scope.db.op(self.domain, write=write, token=self._scope.token)

    def _where(self) -> dict[str, Any]:
        return {"backend": BACKEND, "domain": self.domain, "project": self._scope.db.project_id}

    def _not_found(self, what: str) -> NotFoundError:
        return NotFoundError(f"{what} does not exist", code="not_found", **self._where())

    def _conflict(self, message: str, code: str = "conflict") -> ConflictError:
        return ConflictError(message, code=code, **self._where())

    def _invalid(self, message: str, code: str = "invalid") -> DataValidationError:
        return DataValidationError(message, code=code, **self._where())

    def _ids(self, field: str, values: Sequence[int]) -> list[int]:
        for value in values:
            self._check.count(field, value)
        return list(values)

    def _limit(self, limit: int | None) -> int | None:
        """``None``/negative: unlimited (None); else the bound. Non-integers are refused."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise self._invalid("limit must be an integer", "invalid_type")
        return effective_limit(limit)

    @staticmethod
    def _sql_limit(bound: int | None) -> int:
        return -1 if bound is None else bound


def chunks(values: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    """Split long id lists so no statement exceeds SQLite's bound-parameter limit."""
    for start in range(0, len(values), size):
        yield values[start:start + size]


def marks(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)
