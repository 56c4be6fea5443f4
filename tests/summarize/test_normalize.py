"""Provider response shapes normalized to plain text (plain data, as providers send it)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from lcm_summarizers.normalize import response_text

SHAPES: list[tuple[str, Any, str]] = [
    ("plain string", "  just text  ", "just text"),
    ("openai chat", {"choices": [{"message": {"role": "assistant", "content": "chat answer"}}]}, "chat answer"),
    (
        "openai content parts",
        {"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]},
        "a\nb",
    ),
    (
        "anthropic blocks",
        {"content": [{"type": "thinking", "thinking": "hidden"}, {"type": "text", "text": "anthropic answer"}]},
        "anthropic answer",
    ),
    ("responses output_text", {"output_text": "responses answer"}, "responses answer"),
    (
        "responses output items",
        {
            "output": [
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}]},
                {"type": "message", "content": [{"type": "output_text", "text": "final answer"}]},
            ]
        },
        "final answer",
    ),
    ("nested summary", {"summary": {"content": [{"type": "text", "text": "nested"}]}}, "nested"),
    ("object attributes", SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="obj"))]), "obj"),
]


@pytest.mark.parametrize(("label", "response", "expected"), SHAPES, ids=[s[0] for s in SHAPES])
def test_answer_text(label: str, response: Any, expected: str) -> None:
    normalized = response_text(response)
    assert normalized.text == expected and not normalized.from_reasoning


@pytest.mark.parametrize(
    "response",
    [
        {"choices": [{"message": {"content": None, "reasoning_content": "only reasoning"}}]},
        {"content": [{"type": "thinking", "thinking": "only reasoning"}]},
        {"output": [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "only reasoning"}]}]},
    ],
)
def test_reasoning_only_is_the_fallback(response: Any) -> None:
    normalized = response_text(response)
    assert normalized.text == "only reasoning" and normalized.from_reasoning


def test_no_text_reports_block_types() -> None:
    normalized = response_text({"content": [{"type": "tool_use", "name": "x", "input": {}}, {"type": "image"}]})
    assert normalized.text == "" and set(normalized.block_types) == {"tool_use", "image"}
    assert response_text(None).text == "" and response_text({"choices": []}).text == ""


def test_deeply_nested_input_terminates() -> None:
    deep: Any = "bottom"
    for _ in range(200):
        deep = {"content": [deep]}
    assert response_text(deep).text == ""
