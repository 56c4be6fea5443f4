"""How Claude Code's hooks read and answer (``lcm hook --protocol lcm_format_claude.hooks``).

``lcm hook`` imports this module alone on every hook call, so it imports nothing from LCM at run time. Claude
Code's hook JSON is LCM's, but for the sub-agent's own transcript a SubagentStop names
(``agent_transcript_path``); it reads context from ``hookSpecificOutput.additionalContext``.
"""

from __future__ import annotations

import json
from typing import Any


class ClaudeHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        found = data.get("agent_transcript_path")
        return data if found is None else {**data, "subagent_transcript_path": found}

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


PROTOCOL = ClaudeHooks()
