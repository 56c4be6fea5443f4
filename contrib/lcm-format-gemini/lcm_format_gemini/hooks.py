"""How Gemini CLI's hooks read and answer (``lcm hook --protocol lcm_format_gemini.hooks``).

``lcm hook`` imports this module alone on every hook call, so it imports nothing from LCM at run time.
Gemini CLI's hook JSON carries LCM's fields (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``prompt``, ``source``/``reason``). Its AfterTool (LCM's PostToolUse) names the call as
``tool_name`` and ``tool_input``, with a ``tool_response`` of the result given to the model (``llmContent``),
its display form and an optional ``error`` (``{message, type}``); a shell command's ``llmContent`` ends with
``Exit Code: N`` when it failed. Only the status and the error's text are read from it, never the output.
Gemini CLI reads context from ``hookSpecificOutput.additionalContext`` (SessionStart, BeforeAgent).
"""

from __future__ import annotations

import json
import re
from typing import Any

_EXIT_CODE = re.compile(r"^Exit Code: (-?[0-9]{1,6})\s*$", re.MULTILINE)
KINDS = {"run_shell_command": "shell", "replace": "edit", "write_file": "edit"}


class GeminiHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        response = data.get("tool_response")
        if event != "PostToolUse" or not isinstance(response, dict):
            return data
        read: dict[str, Any] = {**data, "tool_response": {}, "tool_kind": KINDS.get(str(data.get("tool_name")))}
        error = response.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        content = response.get("llmContent")
        text = content if isinstance(content, str) else ""
        code = _EXIT_CODE.search(text)
        if isinstance(message, str) and message.strip():
            read.update(tool_status="error", tool_error=message)
        elif code is not None and int(code.group(1)) != 0:
            read.update(tool_status=f"exit {int(code.group(1))}", tool_error=text)
        else:
            read["tool_status"] = "ok"
        return read

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


PROTOCOL = GeminiHooks()
