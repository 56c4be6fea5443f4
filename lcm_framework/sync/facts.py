"""What a PostToolUse hook keeps of one tool call: name, status, files touched, a capped command and error.

Runs in the hook on every tool call, so it is stdlib-only and cheap. Never the tool's output: only the
first ``MAX_TEXT`` characters of the command and of an error message, at most ``MAX_FILES`` paths. Before
the text reaches the outbox file, every token shape and high-entropy word in it is redacted
(``secret_shapes.redact_shapes``: no rule pack loads this fast); the full scrubber runs on it again before
anything leaves the outbox (``sync.transport``, ``sync.learning``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..secret_shapes import redact_shapes

MAX_TEXT = 300
MAX_FILES = 20
MAX_PATH = 400
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code")
_STATUS = re.compile(r"ok|error|exit -?[0-9]{1,6}")
KINDS = frozenset({"shell", "edit"})


def tool_facts(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The facts of a PostToolUse hook input in LCM's hook JSON (``tool_name``, ``tool_input``,
    ``tool_response``, and the ``tool_status``/``tool_error``/``tool_kind`` an agent's protocol may give
    outright), or ``None`` when it names no tool. ``kind`` (``shell`` or ``edit``) says what the tool is when
    its agent says so: passive learning then needs no list of every agent's tool names."""
    tool = data.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    given = data.get("tool_input")
    tool_input: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    answer = data.get("tool_response")
    response: Mapping[str, Any] = answer if isinstance(answer, Mapping) else {}
    given_status = data.get("tool_status")
    status = given_status if isinstance(given_status, str) and _STATUS.fullmatch(given_status) else \
        _status(response, answer)
    facts: dict[str, Any] = {"tool": tool[:64], "status": status}
    if data.get("tool_kind") in KINDS:
        facts["kind"] = data["tool_kind"]
    files = _files(tool_input)
    if files:
        facts["files"] = files
    command = tool_input.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str) and command.strip() and not _PATCH_FILE.search(command):
        facts["command"] = _capped(command.strip())
    if facts["status"] != "ok":
        given_error = data.get("tool_error")
        error = given_error.strip() if isinstance(given_error, str) and given_error.strip() else \
            _error_text(response, answer)
        if error:
            facts["error"] = _capped(error)
    return facts


def _capped(text: str) -> str:
    """At most ``MAX_TEXT`` characters, redacted before the cut (so the cut never leaves half a token)."""
    return redact_shapes(text[:MAX_TEXT * 4])[:MAX_TEXT]


def _status(response: Mapping[str, Any], answer: Any) -> str:
    for key in _EXIT_KEYS:
        code = response.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            return "ok" if code == 0 else f"exit {code}"
    if response.get("is_error") is True or response.get("isError") is True or response.get("success") is False \
            or response.get("interrupted") is True:
        return "error"
    if isinstance(response.get("error"), str) and response["error"]:
        return "error"
    if isinstance(answer, str) and answer.lower().startswith(("error", "failed")):
        return "error"
    return "ok"


def _error_text(response: Mapping[str, Any], answer: Any) -> str:
    for key in ("error", "stderr", "message", "output"):
        value = response.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return answer.strip() if isinstance(answer, str) else ""


def _files(tool_input: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    for key in _PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            found.append(value)
    for key in ("paths", "files"):
        values = tool_input.get(key)
        if isinstance(values, list):
            found += [v for v in values if isinstance(v, str)]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        found += [e["file_path"] for e in edits if isinstance(e, Mapping) and isinstance(e.get("file_path"), str)]
    for key in ("command", "input", "patch"):
        value = tool_input.get(key)
        if isinstance(value, str):
            found += [m.strip() for m in _PATCH_FILE.findall(value)]
    unique = [f for f in dict.fromkeys(found) if f and len(f) <= MAX_PATH]
    return unique[:MAX_FILES]
