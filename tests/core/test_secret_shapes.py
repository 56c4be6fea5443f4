"""The hook's first-line redaction (``secret_shapes``): token-shaped words go, the words a command is made of stay."""

from __future__ import annotations

import pytest

from lcm_framework.secret_shapes import REDACTED, redact_shapes

KEPT = ["src/components/Button2.tsx", "node_modules/.bin/vitest2", "tests/e2e/test_copilot.py",
        "123e4567-e89b-12d3-a456-426614174000", "e2e-gemini-marker-3c8d", "C:\\Users\\dev2\\AppData\\Local\\Programs",
        "release-2024-11-30-hotfix3", "python3.11"]
GONE = ["Zp1QmA9sTx8fKd93kdlq0a", "x8f-Kd93_kdlq0Zp1QmA9sT", "AbC9dEf8GhI7jKl6MnO5pQr4",
        "ghp_" + "a1B2c3D4" * 4, "AKIA" + "Q3XAMPLE7KEY2ABC", "https://deploy:hunter2pass@git.example.com/x"]


@pytest.mark.parametrize("word", KEPT)
def test_paths_ids_and_dashed_names_are_kept(word: str) -> None:
    command = f"pytest {word} -x"
    assert redact_shapes(command) == command


@pytest.mark.parametrize("word", GONE)
def test_token_shaped_words_are_redacted(word: str) -> None:
    redacted = redact_shapes(f"curl -H 'X-Token: {word}' https://api.example.com")
    assert REDACTED in redacted and word not in redacted
