"""How LCM's OpenCode plugin's hooks read and answer (``lcm hook --protocol lcm_format_opencode.hooks``).

``lcm hook`` imports this module alone on every hook call, so it imports nothing from LCM at run time.
OpenCode has no command hooks: LCM's plugin (``plugin.js``) runs ``lcm hook`` itself with LCM's hook JSON
(for PostToolUse from ``tool.execute.after``: the tool, its command or file, its exit code and, for a failed
call, the start of its output), and reads ``hookSpecificOutput.additionalContext`` back.
"""

from __future__ import annotations

import json
from typing import Any

KINDS = {"bash": "shell", "edit": "edit", "write": "edit", "patch": "edit"}


class OpenCodeHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        return {**data, "tool_kind": KINDS.get(str(data.get("tool_name")))} if event == "PostToolUse" else data

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


PROTOCOL = OpenCodeHooks()
