"""The form in which a machine delivers one outbox event: scrubbed, with no local path, and its digest.

Fixed by the event's first delivery claim (``Outbox.claim_delivery``), so every retry sends exactly the
same bytes and the inbox's readback can be compared exactly. Files become paths relative to the project
root (the same file on two machines is one path); absolute transcript, working-directory and project
paths never leave the machine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from ..outbox import OutboxEvent

KEPT_FIELDS = ("agent", "session_id", "source", "reason", "trigger", "agent_type")


def transport_form(item: OutboxEvent, root: str, scrub: Callable[[str], str]) -> tuple[str, str]:
    """``(payload, digest)`` of ``item`` delivered from the project at ``root``."""
    body: dict[str, Any] = {"event": item.event}
    for key in KEPT_FIELDS:
        value = item.payload.get(key)
        if isinstance(value, str) and value:
            body[key] = value
    facts = item.payload.get("tool_facts")
    if isinstance(facts, dict):
        tool: dict[str, Any] = {k: facts[k] for k in ("tool", "status") if isinstance(facts.get(k), str)}
        files = facts.get("files")
        if isinstance(files, list):
            tool["files"] = [relative(root, f) for f in files if isinstance(f, str)]
        for key in ("command", "error"):
            if isinstance(facts.get(key), str):
                tool[key] = scrub(facts[key])
        body["tool"] = tool
    payload = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return payload, digest(item, payload)


def digest(item: OutboxEvent, payload: str) -> str:
    """SHA-256 over everything the inbox keeps immutable."""
    text = "\n".join(("lcm-passive-event", str(item.version), item.uuid, item.machine_id, str(item.seq), item.event,
                      payload))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def relative(root: str, path: str) -> str:
    """``path`` relative to ``root`` when inside it (POSIX separators), else as given."""
    candidate, base = PurePosixPath(path), PurePosixPath(root)
    if candidate.is_absolute() and candidate.is_relative_to(base) and candidate != base:
        return candidate.relative_to(base).as_posix()
    return path
