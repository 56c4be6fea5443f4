"""Representative Codex rollout envelopes: every shape the mapper reads.

The scrubber refuses a custom pattern that would redact a key or
discriminator of these records (``type``, ``payload``, ``response_item``,
``message``, ``role``, ``input_text``, ``output_text``, ``call_id`` ...).
"""

from __future__ import annotations

from typing import Any

_TS = "2025-01-01T00:00:00.000Z"
_USAGE = {"input_tokens": 1, "cached_input_tokens": 1, "output_tokens": 1, "reasoning_output_tokens": 1,
          "total_tokens": 1}


def _item(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": _TS, "type": "response_item", "payload": payload}


STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {
        "timestamp": _TS,
        "type": "session_meta",
        "payload": {
            "id": "00000000-0000-4000-8000-000000000000",
            "timestamp": _TS,
            "cwd": "/home/user/project",
            "originator": "codex_cli_rs",
            "cli_version": "0.46.0",
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
            "git": {"commit_hash": "0" * 40, "branch": "main", "repository_url": "https://example.com/r.git"},
        },
    },
    _item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}),
    _item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "hello"}]}),
    _item({"type": "message", "role": "user", "content": [{"type": "input_image", "image_url": "data:,"}]}),
    _item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}),
    _item(
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "plan"}],
            "content": None,
            "encrypted_content": "opaque",
        }
    ),
    _item({"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "call_1"}),
    _item({"type": "function_call_output", "call_id": "call_1", "output": "ok"}),
    _item(
        {"type": "custom_tool_call", "status": "completed", "call_id": "call_2", "name": "apply_patch", "input": "x"}
    ),
    _item({"type": "custom_tool_call_output", "call_id": "call_2", "output": "ok"}),
    _item(
        {
            "type": "local_shell_call",
            "call_id": "call_3",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"], "timeout_ms": None, "working_directory": None},
        }
    ),
    _item({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "q"}}),
    {"timestamp": _TS, "type": "event_msg", "payload": {"type": "user_message", "message": "hello", "kind": "plain"}},
    {
        "timestamp": _TS,
        "type": "event_msg",
        "payload": {"type": "token_count", "info": {"total_token_usage": _USAGE, "last_token_usage": _USAGE,
                                                    "model_context_window": 1}},
    },
    {"timestamp": _TS, "type": "turn_context", "payload": {"cwd": "/home/user/project", "model": "gpt-5-codex"}},
    {"timestamp": _TS, "type": "compacted", "payload": {"message": "summary"}},
)
