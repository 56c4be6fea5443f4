"""Data rules enforced before any database access, shared by every adapter."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import DataValidationError

MAX_SAFE_INT = 2**53 - 1


class Validator:
    """Raises DataValidationError tagged with one backend/domain/project."""

    def __init__(self, backend: str, domain: str, project: str | None = None) -> None:
        self.backend = backend
        self.domain = domain
        self.project = project

    def _fail(self, message: str, code: str) -> DataValidationError:
        return DataValidationError(
            message, backend=self.backend, domain=self.domain, project=self.project, code=code
        )

    def text(self, field: str, value: str | None) -> None:
        """Refuse U+0000 (and non-str values) in a text field."""
        if value is None:
            return
        if not isinstance(value, str):
            raise self._fail(f"{field} must be text", "invalid_type")
        if "\x00" in value:
            raise self._fail(f"{field} contains U+0000", "nul_character")

    def texts(self, field: str, values: Iterable[str | None]) -> None:
        for value in values:
            self.text(field, value)

    def count(self, field: str, value: int) -> None:
        """A non-negative integer within 2**53-1 (sequence, ordinal, token count)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(f"{field} must be an integer", "invalid_type")
        if value < 0 or value > MAX_SAFE_INT:
            raise self._fail(f"{field} is outside 0..2^53-1", "integer_out_of_range")

    def optional_count(self, field: str, value: int | None) -> None:
        if value is not None:
            self.count(field, value)


def effective_limit(limit: int | None) -> int | None:
    """``None`` or negative: unlimited (returns None); otherwise the bound (0 = no rows)."""
    if limit is None or limit < 0:
        return None
    return limit
