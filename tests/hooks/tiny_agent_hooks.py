"""The hook protocol of an agent LCM's core has never heard of (``tests/hooks/test_fourth_agent.py``).

Its hook JSON names things its own way (``sid``, ``log``, ``dir``, ``ask``, a ``tool`` object with ``argv``,
``code`` and ``stderr``) and it reads context from ``{"inject": ...}``. Imported alone by ``lcm hook
--protocol tests.hooks.tiny_agent_hooks``, so it imports nothing from LCM.
"""

from __future__ import annotations

import json
from typing import Any


class TinyHooks:
    def read(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        read: dict[str, Any] = {"session_id": data.get("sid"), "transcript_path": data.get("log"),
                                "cwd": data.get("dir"), "prompt": data.get("ask"), "source": data.get("why")}
        tool = data.get("tool")
        if isinstance(tool, dict):
            code = tool.get("code")
            read.update(tool_name=tool.get("name"), tool_input={"command": " ".join(tool.get("argv", []))},
                        tool_status="ok" if code == 0 else f"exit {code}", tool_error=tool.get("stderr"))
        return read

    def answer(self, event: str, context: str) -> str:
        return json.dumps({"inject": context})


PROTOCOL = TinyHooks()
