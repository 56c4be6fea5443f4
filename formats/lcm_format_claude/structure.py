"""Representative Claude Code records: every shape the mapper reads.

The scrubber refuses a custom pattern that would redact a key or
discriminator of these records (``type``, ``message``, ``role``,
``content``, ``tool_use`` ...), since the mapper could no longer read them.
Their keys are also the structural keys of the keyword scan: ``token`` in the
usage counters (``input_tokens`` ...) selects no rule by itself.
"""

from __future__ import annotations

from typing import Any

_BASE: dict[str, Any] = {
    "parentUuid": None,
    "isSidechain": False,
    "userType": "external",
    "cwd": "/home/user/project",
    "sessionId": "00000000-0000-4000-8000-000000000000",
    "version": "2.0.28",
    "gitBranch": "main",
    "uuid": "00000000-0000-4000-8000-000000000001",
    "timestamp": "2025-01-01T00:00:00.000Z",
}

_USAGE: dict[str, Any] = {
    "input_tokens": 1,
    "cache_creation_input_tokens": 1,
    "cache_read_input_tokens": 1,
    "cache_creation": {"ephemeral_5m_input_tokens": 1, "ephemeral_1h_input_tokens": 1},
    "output_tokens": 1,
    "service_tier": "standard",
}

STRUCTURAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {**_BASE, "type": "user", "message": {"role": "user", "content": "hello"}},
    {
        **_BASE,
        "type": "user",
        "isMeta": True,
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                {"type": "document", "title": "a", "source": {"type": "text", "media_type": "text/plain"}},
            ],
        },
    },
    {
        **_BASE,
        "type": "assistant",
        "requestId": "req_1",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "hello"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            ],
            "stop_reason": "tool_use",
            "usage": _USAGE,
        },
    },
    {
        **_BASE,
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [{"type": "text", "text": "failed"}],
                    "is_error": True,
                },
            ],
        },
        "toolUseResult": {"stdout": "ok", "stderr": "", "interrupted": False, "isImage": False},
    },
    {
        **_BASE,
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": "done"}]},
        "toolUseResult": {"status": "completed", "totalDurationMs": 1, "totalTokens": 1, "totalToolUseCount": 1,
                          "usage": _USAGE},
    },
    {**_BASE, "type": "system", "subtype": "informational", "content": "note", "level": "info"},
    {**_BASE, "type": "user", "isSidechain": True, "message": {"role": "user", "content": "hello"}},
    {"type": "summary", "summary": "title", "leafUuid": "00000000-0000-4000-8000-000000000001"},
    {
        "type": "file-history-snapshot",
        "messageId": "00000000-0000-4000-8000-000000000001",
        "snapshot": {"messageId": "00000000-0000-4000-8000-000000000001", "trackedFileBackups": {}},
        "isSnapshotUpdate": False,
    },
)
