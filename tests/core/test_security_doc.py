"""docs/security.md names a test for every guarantee: each named test file and test function exists."""

from __future__ import annotations

import re

from tests.conftest import REPO

DOC = REPO / "docs" / "security.md"


def test_every_test_the_security_page_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    files = set(re.findall(r"tests/[\w/]+\.py", text))
    assert files, "the page names no test file"
    assert [f for f in sorted(files) if not (REPO / f).is_file()] == []
    paths = sorted((REPO / "tests").rglob("test_*.py"))
    modules = {p.stem for p in paths}
    defined = {name for p in paths for name in re.findall(r"def (test_\w+)", p.read_text(encoding="utf-8"))}
    named = set(re.findall(r"`(?:[\w/.]+::)?(test_\w+)`", text)) | set(re.findall(r"::(test_\w+)", text))
    unknown = sorted(n for n in named if n not in defined and n not in modules)
    assert unknown == [], f"docs/security.md names tests that do not exist: {unknown}"
