"""What every PostgreSQL repository shares: its executor, validation, typed errors and value checks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from lcm_framework.plugin_api import StorageError
from lcm_framework.plugin_api.storage import MAX_SAFE_INT, CheckedRepository, Validator

from ..errors import BACKEND
from ..runtime import Executor


class Repository(CheckedRepository):
    """Base of the domain repositories, bound to one project and one executor."""

    domain: ClassVar[str]

    def __init__(self, executor: Executor, project_id: str) -> None:
        self._ex = executor
        self._project = project_id
        self._check = Validator(BACKEND, self.domain, project_id)

    def _cursor(self) -> Any:
        return self._ex.cursor(self.domain)

    def _where(self) -> dict[str, Any]:
        return {"backend": BACKEND, "domain": self.domain, "project": self._project}

    def _int(self, value: Any) -> int:
        """A bigint from the server, accepted only within the safe-integer range."""
        if isinstance(value, bool) or not isinstance(value, int) or not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            raise StorageError("a stored integer is outside the safe range", code="integer_out_of_range",
                               **self._where())
        return value


def utc(value: datetime | None) -> datetime | None:
    """Aware UTC for a datetime from either side (naive values are taken as UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def utc_required(value: datetime) -> datetime:
    out = utc(value)
    assert out is not None
    return out
