"""How Copilot CLI's hooks read and answer (``lcm hook --protocol lcm_format_copilot.hooks``).

``lcm hook`` imports this module alone on every hook call, so it imports nothing from LCM at run time.
Under the Claude-compatible event names LCM installs, Copilot CLI sends snake_case hook JSON carrying LCM's
fields. Its PostToolUse names the call as ``tool_name`` and ``tool_input`` (arguments, a JSON string when
they could not be parsed) with a ``tool_result`` of ``result_type`` (``success``, ``failure``, ``denied``,
``error``) and ``text_result_for_llm``: only the type, and the text of a call that did not succeed, are read.
Copilot CLI injects a top-level ``additionalContext`` (SessionStart, UserPromptSubmit).
"""

from __future__ import annotations

import json
from typing import Any

KINDS = {"bash": "shell", "powershell": "shell", "edit": "edit", "create": "edit", "write": "edit"}
"""By lower-cased tool name: under the Claude-compatible event names Copilot CLI 1.0 names its tools as Claude
Code does (``Bash``), its reference lists them in lower case (``bash``, ``edit``, ``create``)."""


class CopilotHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        if event != "PostToolUse":
            return data
        read: dict[str, Any] = {k: v for k, v in data.items() if k != "tool_result"}
        read["tool_kind"] = KINDS.get(str(data.get("tool_name")).lower())
        arguments = data.get("tool_input")
        if isinstance(arguments, str):
            try:
                read["tool_input"] = json.loads(arguments)
            except ValueError:
                read["tool_input"] = {}
        result = data.get("tool_result")
        result = result if isinstance(result, dict) else {}
        kind = result.get("result_type")
        if kind == "success":
            read["tool_status"] = "ok"
        elif isinstance(kind, str) or isinstance(data.get("error"), str):
            text = result.get("text_result_for_llm")
            read.update(tool_status="error", tool_error=text if isinstance(text, str) else data.get("error"))
        return read

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"additionalContext": context})


PROTOCOL = CopilotHooks()
