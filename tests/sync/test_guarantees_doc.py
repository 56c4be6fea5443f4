"""docs/postgresql.md ("Several machines") names a test for each team-sync guarantee: each test it names
exists, in the file it names (``path::test``, and ``::test`` for one more in the same file)."""

from __future__ import annotations

import re

from tests.conftest import REPO

DOC = REPO / "docs" / "postgresql.md"


def _table() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("### Each guarantee and its test")
    return text[start:text.index("\n## ", start)]


def test_every_test_the_several_machines_table_names_exists() -> None:
    rows = [line for line in _table().splitlines() if line.startswith("| ") and "tests/" in line]
    assert len(rows) >= 10, "the table lost its rows"
    missing = []
    for row in rows:
        path = None
        for full, name in re.findall(r"`(tests/[\w/]+\.py)?::(test_\w+)`", row):
            path = full or path
            assert path is not None, f"a test named before its file: {row}"
            source = REPO / path
            if not source.is_file() or not re.search(rf"^def {name}\(", source.read_text("utf-8"), re.M):
                missing.append(f"{path}::{name}")
    assert missing == [], f"docs/postgresql.md names tests that do not exist: {missing}"
