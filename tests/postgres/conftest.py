"""Fixtures of the PostgreSQL tests: the server, a throwaway schema per test, factories on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .support import TestDatabase, require_database


@pytest.fixture
def db() -> TestDatabase:
    return require_database()


@pytest.fixture
def schema(db: TestDatabase) -> Iterator[str]:
    with db.fresh_schema() as name:
        yield name


@pytest.fixture
def make_factory(db: TestDatabase, schema: str, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Build factories on this test's schema; every one is closed at the end."""
    made: list[Any] = []

    def make(url: str | None = None, **overrides: Any) -> Any:
        factory = db.factory(schema, tmp_path, url, **overrides)
        made.append(factory)
        return factory

    yield make
    for factory in made:
        factory.close()
