"""Conformance harness: the PostgreSQL backend on LCM_TEST_POSTGRES_URL, one fresh schema per test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lcm_framework.storage.checked import CheckedBackend
from lcm_framework.storage.contracts import StorageBackendFactory

from . import HarnessUnavailable

NAME = "postgresql"


@contextmanager
def make_factory(tmp_path: Path) -> Iterator[StorageBackendFactory]:
    from tests.postgres.support import TestDatabase, database_or_unavailable

    db: TestDatabase = database_or_unavailable(HarnessUnavailable)
    with db.pooled_schema() as schema:
        factory = CheckedBackend(db.factory(schema, tmp_path))  # as open_backend does
        try:
            yield factory
        finally:
            factory.close()
