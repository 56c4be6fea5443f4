"""How Codex's hooks read and answer (``lcm hook --protocol lcm_format_codex.hooks``).

``lcm hook`` imports this module alone on every hook call, so it imports nothing from LCM at run time.
Codex's hook JSON is LCM's as it is (its PostToolUse names the call as ``tool_name``, ``tool_input`` and
``tool_response``); it reads context from ``hookSpecificOutput.additionalContext``.
"""

from __future__ import annotations

import json
from typing import Any


class CodexHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        return data

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


PROTOCOL = CodexHooks()
