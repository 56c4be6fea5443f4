"""What an API dialect of the fake model server implements (``fake_gemini``, ``fake_chat_completions``).

The server picks the step of the test's script (``fake_model``) and resolves it into a ``Reply``: the text to
answer, or the ``ToolCall`` to make with an offered tool's exact name. A dialect turns that reply into its
API's answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


Reply = str | ToolCall
Answer = tuple[str, bytes]
"""Content type and body of an answer."""


class Dialect(Protocol):
    def handles(self, path: str) -> bool:
        """Whether a POST to ``path`` (no query) is this dialect's."""
        ...

    def takes_step(self, path: str) -> bool:
        """Whether a request to ``path`` may take the script's next step (a token count never does)."""
        ...

    def answer(self, path: str, body: Any, reply: Reply, call_id: str, input_tokens: int) -> Answer:
        """The answer to ``body`` saying ``reply``; ``call_id`` is unique per answer."""
        ...


def smallest(schema: Any) -> Any:
    """The smallest value a JSON schema accepts: its first enum value, required properties filled in."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if isinstance(kind, str):
        kind = kind.lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: smallest(properties.get(name)) for name in schema.get("required") or []}
    return {"array": [], "string": "", "number": 0, "integer": 0, "boolean": False}.get(str(kind))


def json_answer(value: Any) -> Answer:
    return "application/json", json.dumps(value).encode()


def sse_answer(events: Iterable[Any], done: bytes | None = None) -> Answer:
    """Server-sent events, one unnamed ``data:`` line per JSON value, then ``done`` (e.g. ``[DONE]``) if given."""
    data = b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)
    return "text/event-stream", data + (b"data: " + done + b"\n\n" if done is not None else b"")
