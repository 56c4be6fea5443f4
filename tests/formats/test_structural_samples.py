"""Each format's structural samples let the scrubber refuse patterns that would break the mapper."""

from __future__ import annotations

import re
from typing import Any

import pytest
from lcm_format_claude.format import FORMAT as CLAUDE
from lcm_format_codex.format import FORMAT as CODEX

from lcm_framework.errors import ScrubberError
from lcm_framework.kernel.extensions import Rule, RulePack
from lcm_framework.scrub.build import scrubber_from_packs

from .test_gemini_format import FORMAT as GEMINI

# Keys and discriminators each mapper reads: redacting any of them would change what it maps.
NEEDED = {
    "claude": (
        CLAUDE,
        [
            "type",
            "message",
            "role",
            "content",
            "text",
            "tool_use",
            "tool_result",
            "tool_use_id",
            "is_error",
            "thinking",
            "redacted_thinking",
            "image",
            "document",
            "isSidechain",
            "sessionId",
            "cwd",
            "timestamp",
            "user",
            "assistant",
            "system",
            "summary",
            "input",
            "name",
        ],
    ),
    "codex": (
        CODEX,
        [
            "payload",
            "session_meta",
            "response_item",
            "turn_context",
            "event_msg",
            "compacted",
            "function_call",
            "function_call_output",
            "custom_tool_call",
            "custom_tool_call_output",
            "local_shell_call",
            "web_search_call",
            "call_id",
            "arguments",
            "output",
            "reasoning",
            "summary_text",
            "input_text",
            "output_text",
            "input_image",
            "developer",
            "id",
            "cwd",
        ],
    ),
    "gemini": (
        GEMINI,
        [
            "sessionId",
            "projectHash",
            "toolCalls",
            "functionResponse",
            "response",
            "thoughts",
            "gemini",
            "info",
            "$set",
            "$rewindTo",
            "args",
            "result",
            "status",
        ],
    ),
}


def _pack(pattern: str) -> RulePack:
    return RulePack(name="custom", rules=(Rule(id="custom-rule", regex=pattern),))


@pytest.mark.parametrize(
    ("fmt", "token"),
    [(fmt, token) for fmt, tokens in NEEDED.values() for token in tokens],
    ids=lambda v: v if isinstance(v, str) else v.provider,
)
def test_pattern_hitting_a_needed_key_is_refused(fmt: Any, token: str) -> None:
    with pytest.raises(ScrubberError, match=r"structural key or discriminator|representative transcript record"):
        scrubber_from_packs([_pack(rf"(?:^|\b){re.escape(token)}(?:\b|$)")], protected_samples=fmt.structural_samples())


@pytest.mark.parametrize("fmt", [CLAUDE, CODEX, GEMINI], ids=lambda f: f.provider)
def test_ordinary_custom_pattern_is_accepted(fmt: Any) -> None:
    scrubber = scrubber_from_packs([_pack(r"acme-token-[0-9a-f]{16}")], protected_samples=fmt.structural_samples())
    redacted, counts = scrubber.scrub_text("key acme-token-0123456789abcdef here")
    assert "0123456789abcdef" not in redacted and counts
