"""``insert_rows``: multi-row INSERTs split at the connection's bound-parameter limit, rows kept in order."""

from __future__ import annotations

import sqlite3

import pytest
from lcm_sqlite.statements import insert_rows


@pytest.mark.parametrize(("limit", "statements"), [(250_000, 1), (20, 4), (3, 20)])
def test_rows_are_split_at_the_parameter_limit(limit: int, statements: int) -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c BLOB)")
    executed: list[str] = []
    conn.set_trace_callback(executed.append)
    rows = [(i, f"text {i}", bytes([i])) for i in range(20)]
    insert_rows(conn, "t (a, b, c)", rows)
    assert len(executed) == statements
    assert conn.execute("SELECT a, b, c FROM t ORDER BY id").fetchall() == rows


def test_no_rows_run_no_statement() -> None:
    conn = sqlite3.connect(":memory:")
    executed: list[str] = []
    conn.set_trace_callback(executed.append)
    insert_rows(conn, "missing_table (a)", [])
    assert executed == []
