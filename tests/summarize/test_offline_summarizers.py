"""The offline summarizers: extractive keeps what matters within the target; truncate marks its cut."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from lcm_summarizers.extractive import NOTICE, ExtractiveSummarizer, extract
from lcm_summarizers.truncate import MARKER, TruncateSummarizer, truncate_text

from lcm_framework.config import Config
from lcm_framework.kernel.plugins import Plugins
from lcm_framework.summarize.tokens import estimate_tokens
from tests.conftest import CLAUDE_SESSIONS, shared_testdata

from .conftest import request

PLANTED = {
    "user": "[2026-02-17 07:40] user: please make the ledger reject negative balances",
    "path": "[2026-02-17 07:41] assistant: I looked at src/payments/ledger_core.py and the tests.",
    "command": '[2026-02-17 07:42] assistant: tool call Bash: {"command":"pytest tests/test_ledger.py -x -q"}',
    "error": "[2026-02-17 07:43] tool: ValueError: negative balance -4217 for account acct_9f3b",
    "decision": "[2026-02-17 07:44] assistant: We decided to keep Decimal instead of float because of rounding.",
    "number": "[2026-02-17 07:45] tool: 131 passed in 2.37s, p95 latency 18 ms",
    "url": "[2026-02-17 07:46] assistant: See https://docs.python.org/3/library/decimal.html for context.",
    "identifier": "[2026-02-17 07:47] assistant: The helper `LedgerEntry.apply_credit` now rounds once.",
}
NEEDLES = {
    "user": "reject negative balances",
    "path": "src/payments/ledger_core.py",
    "command": "pytest tests/test_ledger.py -x -q",
    "error": "ValueError: negative balance -4217 for account acct_9f3b",
    "decision": "keep Decimal instead of float",
    "number": "131 passed in 2.37s",
    "url": "https://docs.python.org/3/library/decimal.html",
    "identifier": "`LedgerEntry.apply_credit`",
}


def filler(n: int, seed: int = 7) -> list[str]:
    words = ("the", "a", "value", "then", "also", "more", "some", "other", "text", "about", "while", "when")
    rng = random.Random(seed)
    return [
        f"[2026-02-17 07:{30 + i % 10:02d}] assistant: " + " ".join(rng.choice(words) for _ in range(14))
        for i in range(n)
    ]


def planted_segment() -> str:
    lines = filler(400)
    for offset, key in enumerate(PLANTED):
        lines.insert(60 + offset * 40, PLANTED[key])
    return "\n\n".join(lines)


def test_extractive_keeps_planted_details_within_target() -> None:
    segment = planted_segment()
    out = ExtractiveSummarizer().summarize(request(segment, target_tokens=400))
    for key, needle in NEEDLES.items():
        assert needle in out, key
    assert estimate_tokens(out) <= 400 < estimate_tokens(segment)
    assert out.splitlines()[-1].startswith("Expand for details")


def test_extractive_orders_by_time_and_stamps_lines() -> None:
    out = extract(planted_segment(), 400)
    positions = [out.index(needle) for needle in NEEDLES.values()]
    assert positions == sorted(positions)
    assert "[2026-02-17 07:43] tool: ValueError" in out
    assert out.splitlines()[0].startswith("[extractive summary of ")


def test_extractive_prefers_errors_when_budget_is_tight() -> None:
    out = extract(planted_segment(), 40)
    assert estimate_tokens(out) <= 40
    assert "ValueError: negative balance -4217" in out


def test_extractive_is_deterministic_and_short_input_is_kept_whole() -> None:
    segment = planted_segment()
    assert extract(segment, 300) == extract(segment, 300)
    assert extract("  [2026-02-17 07:40] user: hi  ", 300) == "[2026-02-17 07:40] user: hi"


def test_extractive_timestamp_prefix_for_continuation_lines() -> None:
    body = "\n".join(f"line {i} of output" for i in range(300))
    segment = f"[2026-03-01 10:00] user: run it\n\n[2026-03-01 10:05] tool: {body}\nTypeError: x is None\n{body}"
    out = extract(segment, 200)
    before_error = out[: out.index("TypeError: x is None")]
    assert before_error.rindex("[2026-03-01 10:05]") > before_error.rindex("[2026-03-01 10:00]")


def test_extractive_condenses_summary_segments() -> None:
    blocks = [
        f"[2026-02-1{d} 07:00 - 2026-02-1{d} 09:00]\n" + "\n".join(f"plain note {i} on day {d}" for i in range(40))
        + f"\nRuntimeError: boom {d}"
        for d in range(1, 6)
    ]
    out = extract("\n\n".join(blocks), 300)
    assert all(f"RuntimeError: boom {d}" in out for d in range(1, 6))
    assert "2026-02-11 07:00 .. 2026-02-15 09:00" in out.splitlines()[0]


@pytest.mark.parametrize(
    "segment",
    [
        "no timestamps at all\n" * 500,
        "\U0001f600 émoji ünïcode " * 400 + "\nKeyError: 'ключ'",
        "x" * 50_000,
        "[2026-02-17 07:40] user: " + "\ud800 lone surrogate " * 300,
        "\n" * 5000,
    ],
)
def test_extractive_handles_odd_input_within_target(segment: str) -> None:
    out = extract(segment, 100)
    assert estimate_tokens(out) <= 100
    out.encode("utf-8", "surrogatepass")


def test_extractive_on_real_session_text_respects_target() -> None:
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(shared_testdata(CLAUDE_SESSIONS).glob("*.jsonl")))
    for start in range(0, len(text), 200_000):
        out = extract(text[start : start + 80_000], 1000)
        assert 0 < estimate_tokens(out) <= 1000


def test_extractive_notice_and_token_estimate() -> None:
    summarizer = ExtractiveSummarizer()
    assert summarizer.notice == NOTICE and "extractive" in NOTICE
    assert summarizer.count_tokens("abcdefgh") == 2
    assert summarizer.count_tokens("abcdefghi") == 3


def test_truncate_marks_cut_and_respects_target() -> None:
    text = "\n".join(f"line {i} " + "word " * 20 for i in range(500))
    out = truncate_text(text, 100)
    head, tail = out.split("\n" + MARKER + "\n")
    assert estimate_tokens(out) <= 100
    assert out.startswith("line 0 ") and text.strip().endswith(tail) and text.startswith(head)
    assert truncate_text(text, 100) == out
    assert truncate_text("short text", 100) == "short text"


def test_truncate_summarizer_uses_configured_cap(make_config: Callable[..., Config]) -> None:
    segment = "word " * 10_000
    default = TruncateSummarizer(make_config())
    assert estimate_tokens(default.summarize(request(segment, target_tokens=5000))) <= 512
    small = TruncateSummarizer(make_config(LCM_COMPACTION_TRUNCATE_TOKENS="64"))
    out = small.summarize(request(segment, target_tokens=5000))
    assert MARKER in out and estimate_tokens(out) <= 64
    assert estimate_tokens(small.summarize(request(segment, target_tokens=32))) <= 32


def test_builtin_summarizers_are_registered(
    make_config: Callable[..., Config], make_plugins: Callable[..., Plugins]
) -> None:
    factories = make_plugins().summarizers()
    assert {"litellm", "extractive", "truncate"} <= set(factories)
    config = make_config()
    assert factories["extractive"](config).name == "extractive"
    assert factories["truncate"](config).name == "truncate"
