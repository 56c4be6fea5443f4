"""Statement helpers shared by the repositories: id lists in chunks, placeholders, multi-row inserts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any


def chunks(values: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    """Split long id lists so no statement exceeds SQLite's bound-parameter limit."""
    for start in range(0, len(values), size):
        yield values[start:start + size]


def marks(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)


MAX_INSERT_PARAMETERS = 32766
"""Bound parameters per multi-row INSERT at most (SQLite's default limit since 3.32; a build's lower one wins)."""


def insert_rows(conn: sqlite3.Connection, into: str, rows: Sequence[Sequence[Any]]) -> None:
    """``INSERT INTO {into} VALUES (...), (...)``: as few statements as the parameter limit allows (fewer
    statements cost less than statement texts that repeat and stay prepared).

    Inside a transaction SQLite opens a statement savepoint per statement, and
    the full-text index flushes its pending terms into a new segment at each
    one: ``executemany`` on an indexed table wrote a segment per row (and then
    merged them), one statement per chunk writes one.
    """
    if not rows:
        return
    width = len(rows[0])
    row_marks = "(" + ",".join("?" * width) + ")"
    limit = min(MAX_INSERT_PARAMETERS, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))
    per = max(1, limit // width)
    for start in range(0, len(rows), per):
        group = rows[start:start + per]
        conn.execute(f"INSERT INTO {into} VALUES {','.join([row_marks] * len(group))}",
                     [value for row in group for value in row])
