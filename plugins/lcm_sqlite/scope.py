"""What every repository is bound to: the project database, the active tier and maybe a transaction."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import ClassVar

from lcm_framework.plugin_api.storage import CheckedRepository, FullTextTier, Validator

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


class Repository(CheckedRepository):
    """Base of the domain repositories: validation, operations and typed errors for one domain."""

    domain: ClassVar[str]

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self._check = Validator(BACKEND, self.domain, scope.db.project_id)

    def _op(self, *, write: bool = False) -> AbstractContextManager[sqlite3.Connection]:
        return self._scope.db.op(self.domain, write=write, token=self._scope.token)

    @staticmethod
    def _sql_limit(bound: int | None) -> int:
        return -1 if bound is None else bound
