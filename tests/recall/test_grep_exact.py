"""``lcm grep`` is exact recall: the pattern's text by default, words anywhere only with --mode full_text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_lcm

PHRASE = "File has not been read yet"
EXACT = f"<tool_use_error>{PHRASE}. Read it first before writing to it.</tool_use_error>"
SCATTERED = "The file I read has a header; it has not been committed yet, and the README is read-only."
ROOT = "/work/grep-exact"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("grep")
    session = "9e9e9e9e-0000-4000-8000-000000000001"
    lines = []
    kept_out = f"<local-command-stdout>{EXACT}</local-command-stdout>"  # client metadata: --include-meta finds it
    for n, (role, text) in enumerate([("user", SCATTERED), ("assistant", "ok"), ("user", EXACT), ("user", kept_out)]):
        lines.append(json.dumps({"type": role, "sessionId": session, "cwd": ROOT, "uuid": f"u{n}",
                                 "parentUuid": f"u{n - 1}" if n else None, "message": {"role": role, "content": text},
                                 "timestamp": f"2025-10-14T14:0{n}:00.000Z"}))
    transcript = base / f"{session}.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    assert grep_in(base, "import", str(transcript)).returncode == 0
    return base


def grep_in(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_lcm("--project", ROOT, *args, env={"HOME": str(home), "LCM_HOME": str(home / ".lcm")})


def contents(home: Path, *args: str) -> list[str]:
    done = grep_in(home, "grep", *args, "--json")
    found = json.loads(done.stdout)
    return [h["snippet"] for g in found["groups"] for h in g["hits"]]


def test_a_plain_pattern_matches_the_phrase_not_its_words_scattered(home: Path) -> None:
    assert contents(home, PHRASE) == [EXACT]
    assert sorted(contents(home, PHRASE, "--mode", "full_text")) == sorted([EXACT, SCATTERED])


def test_the_phrase_is_case_sensitive_and_a_miss_says_how_to_match_words(home: Path) -> None:
    found = json.loads(grep_in(home, "grep", PHRASE, "--include-meta", "--json").stdout)
    assert len(found["meta_hits"]) == 1
    done = grep_in(home, "grep", PHRASE.lower(), "--include-meta")
    assert done.returncode == 1
    assert "case-sensitive" in done.stdout and "--mode full_text" in done.stdout


@pytest.mark.parametrize("extra", [(), ("--include-meta",)])
def test_an_invalid_regex_is_a_one_line_usage_error_without_re2_log_noise(home: Path, extra: tuple[str, ...]) -> None:
    done = grep_in(home, "grep", "(unclosed", "--mode", "regex", *extra)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("lcm: error: --mode regex:")
    assert "(unclosed" in done.stderr and "re2" not in done.stderr.lower()
