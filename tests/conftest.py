"""Shared test set-up: every test runs with its own LCM_HOME and HOME, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
TESTDATA = SHARED / "testdata"
CLAUDE_SESSIONS = TESTDATA / "transcripts" / "claude-code"
GITLEAKS_TOML = TESTDATA / "gitleaks" / "gitleaks.toml"
# A Claude Code session the project itself holds (tool calls, thinking, a hook record, a fake secret).
CLAUDE_SAMPLE_ID = "7c1f3a52-4b8e-4d2a-9e61-0a5b3c9d2f18"
CLAUDE_SAMPLE = REPO / "formats/samples/claude/projects/-home-dev-orders-api" / f"{CLAUDE_SAMPLE_ID}.jsonl"

OFFLINE_ENV = {
    "LITELLM_OFFLINE_MODE": "true",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
}
for _k, _v in OFFLINE_ENV.items():
    os.environ.setdefault(_k, _v)


def in_ci() -> bool:
    """CI runs set CI to a truthy value; there a missing service is a failure, never a skip."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def skip_or_fail(reason: str) -> None:
    """Skip a test whose service is unavailable here; fail it under CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI must not skip this test)")
    pytest.skip(reason)


def shared_testdata(path: Path) -> Path:
    """``path`` under ../shared/testdata; skip (fail under CI) naming the folder when it is absent."""
    if not path.exists():
        skip_or_fail(f"needs {path} from the shared test data folder {TESTDATA}, which is absent here")
    return path


@pytest.fixture(autouse=True)
def lcm_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Isolate LCM_HOME, HOME and agent config dirs in the test's tmp dir; drop stray LCM_* settings."""
    for name in list(os.environ):
        if name.startswith("LCM_") and name != "LCM_TEST_POSTGRES_URL":
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LCM_HOME", str(home / ".lcm"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    return home / ".lcm"


def run_lcm(
    *args: str,
    cwd: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``lcm`` console entry point in a subprocess."""
    full_env = {**os.environ, **OFFLINE_ENV, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "lcm_framework.cli.main", *args],
        cwd=cwd,
        input=input,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def lcm() -> Iterator[object]:
    yield run_lcm
