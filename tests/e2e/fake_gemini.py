"""The Gemini API dialect of the fake model server: ``generateContent``, ``streamGenerateContent`` and
``countTokens`` under ``/v1beta/models/<model>:<method>`` (what ``@google/genai`` sends to
``GOOGLE_GEMINI_BASE_URL``).

A request's tools are ``tools[].functionDeclarations[]``; a reply is one ``GenerateContentResponse`` (as SSE
``data:`` lines when streamed, ``?alt=sse``). A request asking for JSON (``responseMimeType``
``application/json``, Gemini CLI's routing and loop checks) gets the smallest value its
``responseJsonSchema`` allows.
"""

from __future__ import annotations

import json
from typing import Any

from .dialects import Answer, Reply, ToolCall, json_answer, smallest, sse_answer

STREAM, GENERATE, COUNT = ":streamGenerateContent", ":generateContent", ":countTokens"


def function_responses(body: Any) -> list[str]:
    """The ``response`` (as JSON text) of every ``functionResponse`` part a request's contents carry."""
    found = []
    for content in body.get("contents") or [] if isinstance(body, dict) else []:
        for part in content.get("parts") or [] if isinstance(content, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                found.append(json.dumps(part["functionResponse"].get("response")))
    return found


class GeminiDialect:
    """``/v1beta/models/<model>:<method>`` requests."""

    def handles(self, path: str) -> bool:
        return path.endswith((STREAM, GENERATE, COUNT))

    def takes_step(self, path: str) -> bool:
        return not path.endswith(COUNT)

    def answer(self, path: str, body: Any, reply: Reply, call_id: str, input_tokens: int) -> Answer:
        if path.endswith(COUNT):
            return json_answer({"totalTokens": input_tokens})
        config = body.get("generationConfig") if isinstance(body, dict) else None
        config = config if isinstance(config, dict) else {}
        if isinstance(reply, ToolCall):
            part: dict[str, Any] = {"functionCall": {"id": call_id, "name": reply.name, "args": reply.arguments}}
        elif config.get("responseMimeType") == "application/json":
            part = {"text": json.dumps(smallest(config.get("responseJsonSchema") or config.get("responseSchema")))}
        else:
            part = {"text": reply}
        response = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": input_tokens, "candidatesTokenCount": 10,
                              "totalTokenCount": input_tokens + 10},
            "modelVersion": path.rsplit("/", 1)[-1].split(":")[0],
            "responseId": f"resp_{call_id}",
        }
        return sse_answer([response]) if path.endswith(STREAM) else json_answer(response)


DIALECT = GeminiDialect()
