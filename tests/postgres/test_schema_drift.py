"""Start-up verification of the managed schema against the newest migration's fingerprint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lcm_framework.errors import StorageUnavailableError

from .support import TestDatabase

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize(("change", "named"), [
    ("ALTER TABLE {s}.messages ADD COLUMN extra text", "column messages.extra"),
    ("DROP INDEX {s}.messages_trgm_idx", "index messages.messages_trgm_idx"),
    ("ALTER TABLE {s}.conversations ALTER COLUMN title SET NOT NULL", "column conversations.title"),
    ("ALTER TABLE {s}.leases DROP CONSTRAINT leases_fence_check", "constraint leases.leases_fence_check"),
    ("CREATE INDEX sneaky ON {s}.messages (content)", "index messages.sneaky"),
    ("ALTER TABLE {s}.memories ENABLE ROW LEVEL SECURITY", "table memories"),
    ("CREATE ROLE lcm_drift_owner_{n}; ALTER TABLE {s}.leases OWNER TO lcm_drift_owner_{n}", "table leases"),
])
def test_drift_is_refused_at_start_up_with_a_sanitized_diagnostic(
        db: TestDatabase, schema: str, make_factory: Callable[..., Any], change: str, named: str) -> None:
    make_factory().close()
    suffix = schema[-8:]
    with db.connect() as conn:
        conn.execute(change.format(s=schema, n=suffix))
    try:
        with pytest.raises(StorageUnavailableError) as info:
            make_factory()
        message = str(info.value)
        assert info.value.code == "schema_drift" and named in message
        assert "CREATE" not in message and "postgres@" not in message and schema not in message
    finally:
        if "ROLE" in change:
            with db.connect() as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
                conn.execute(f"DROP ROLE lcm_drift_owner_{suffix}")


def test_an_untouched_schema_opens_again(make_factory: Callable[..., Any]) -> None:
    make_factory().close()
    factory = make_factory()
    assert factory.health().ok
