"""How Qwen Code's hooks read and answer (``lcm hook --protocol lcm_format_qwen.hooks``).

``lcm hook`` imports this module alone on every hook call, so it imports nothing from LCM at run time.
Qwen Code's hook JSON uses Claude Code's names, so it carries LCM's fields, but for the sub-agent's own
transcript a SubagentStop names (``agent_transcript_path``). Its PostToolUse names the call as ``tool_name``
and ``tool_input``; its ``tool_response`` is the tool's result as Gemini CLI (which Qwen Code grew from) has
it, ``llmContent`` with an optional ``error`` (``{message, type}``; a shell command's ``llmContent`` ends with
``Exit Code: N`` when it failed), and a failed call may also come with a top-level ``error`` text. Only the
status and the error's text are read from it, never the output. Qwen Code reads context from
``hookSpecificOutput.additionalContext`` (SessionStart, UserPromptSubmit).
"""

from __future__ import annotations

import json
import re
from typing import Any

_EXIT_CODE = re.compile(r"^Exit Code: (-?[0-9]{1,6})\s*$", re.MULTILINE)
KINDS = {"run_shell_command": "shell", "edit": "edit", "write_file": "edit"}


class QwenHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        found = data.get("agent_transcript_path")
        read = data if found is None else {**data, "subagent_transcript_path": found}
        if event == "PostToolUse":
            read = {**read, **_tool_result(data), "tool_kind": KINDS.get(str(data.get("tool_name")))}
        return read

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def _tool_result(data: dict[str, Any]) -> dict[str, Any]:
    """``tool_status`` and ``tool_error`` of a tool call, and an emptied ``tool_response``."""
    response = data.get("tool_response")
    response = response if isinstance(response, dict) else {}
    error = response.get("error") or data.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    content = response.get("llmContent")
    text = content if isinstance(content, str) else ""
    code = _EXIT_CODE.search(text)
    if isinstance(message, str) and message.strip():
        return {"tool_response": {}, "tool_status": "error", "tool_error": message}
    if code is not None and int(code.group(1)) != 0:
        return {"tool_response": {}, "tool_status": f"exit {int(code.group(1))}", "tool_error": text}
    return {"tool_response": {}, "tool_status": "ok"}


PROTOCOL = QwenHooks()
