"""Debian's Chromium driven by Playwright (``executable_path``): absent here, a test skips naming why; under
``CI=true`` it fails (``.ci/run`` installs chromium)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import skip_or_fail

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> Path:
    found = CHROMIUM if CHROMIUM.exists() else (Path(p) if (p := shutil.which("chromium")) else None)
    if found is None:
        skip_or_fail("needs Debian's chromium (apt-get install -y chromium; .ci/run installs it)")
    assert found is not None
    return found


@contextmanager
def browser_context(user_data_dir: Path) -> Iterator[Any]:
    """A fresh persistent context (its own user-data-dir) of the system Chromium, headless."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("needs the playwright package (pip install playwright; in the [test] extra)")
        raise
    executable = chromium_path()
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(user_data_dir), executable_path=str(executable), headless=True, args=ARGS,
            viewport={"width": 1280, "height": 860})
        try:
            yield context
        finally:
            context.close()
