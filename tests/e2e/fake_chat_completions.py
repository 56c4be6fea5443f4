"""The OpenAI-compatible chat completions dialect of the fake model server (``POST .../chat/completions``), as
Qwen Code and OpenCode send it to ``OPENAI_BASE_URL``.

Tools are ``tools[].function.name``; a reply is one assistant message, streamed as ``chat.completion.chunk``
events ending with ``data: [DONE]`` when the request says ``"stream": true``, else one ``chat.completion``. A
request asking for JSON (``response_format`` ``json_object`` / ``json_schema``) gets the smallest value its
schema allows.
"""

from __future__ import annotations

import json
from typing import Any

from .dialects import Answer, Reply, ToolCall, json_answer, smallest, sse_answer

PATH = "/chat/completions"


def tool_results(body: Any) -> list[str]:
    """The content of every ``role: tool`` message a request carries."""
    found = []
    for message in body.get("messages") or [] if isinstance(body, dict) else []:
        if isinstance(message, dict) and message.get("role") == "tool":
            content = message.get("content")
            found.append(content if isinstance(content, str) else "".join(
                p.get("text", "") for p in content or [] if isinstance(p, dict)))
    return found


class ChatCompletionsDialect:
    def handles(self, path: str) -> bool:
        return path.endswith(PATH)

    def takes_step(self, path: str) -> bool:
        return True

    def answer(self, path: str, body: Any, reply: Reply, call_id: str, input_tokens: int) -> Answer:
        body = body if isinstance(body, dict) else {}
        model = body.get("model") if isinstance(body.get("model"), str) else "fake"
        usage = {"prompt_tokens": input_tokens, "completion_tokens": 10, "total_tokens": input_tokens + 10}
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(reply, ToolCall):
            message["tool_calls"] = [{"index": 0, "id": call_id, "type": "function", "function": {
                "name": reply.name, "arguments": json.dumps(reply.arguments)}}]
            finish = "tool_calls"
        else:
            message["content"] = _json_text(body.get("response_format")) or reply
            finish = "stop"
        base = {"id": f"chatcmpl-{call_id}", "created": 0, "model": model}
        if not body.get("stream"):
            return json_answer({**base, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": message, "finish_reason": finish}]})
        chunk = {**base, "object": "chat.completion.chunk"}
        return sse_answer([
            {**chunk, "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**chunk, "choices": [], "usage": usage},
        ], done=b"[DONE]")


def _json_text(response_format: Any) -> str | None:
    if not isinstance(response_format, dict) or response_format.get("type") not in ("json_object", "json_schema"):
        return None
    schema = (response_format.get("json_schema") or {}).get("schema")
    return json.dumps(smallest(schema) if schema else {})


DIALECT = ChatCompletionsDialect()
