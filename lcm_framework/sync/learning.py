"""Local passive learning: what the daemon's consumer promotes from one PostToolUse event.

A command that failed, followed in the same session by a successful command of the same program (its
first word), becomes a memory candidate: "after `X` failed (error), `Y` worked", with the two events'
uuids as its lineage. Texts are scrubbed with the project's scrubber before they are stored. The same
pair is remembered once (``store.remember``-style tag dedup).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from ..outbox import OutboxEvent
from ..storage.contracts import ProjectStorage
from ..storage.models import NewMemory

CANDIDATE_CONFIDENCE = 0.3
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell", "run_shell_command"})


def fail_then_fix(storage: ProjectStorage, item: OutboxEvent, previous: OutboxEvent | None,
                  scrub: Callable[[str], str]) -> int | None:
    """The memory id of the candidate ``item`` completes, or None."""
    now, before = _command(item), _command(previous)
    if now is None or before is None or previous is None:
        return None
    if now["status"] != "ok" or before["status"] == "ok" or _program(now["command"]) != _program(before["command"]):
        return None
    if now["command"] == before["command"]:
        return None  # the same command simply passing on a retry teaches nothing
    fixed, failed = scrub(now["command"]), scrub(before["command"])
    tag = "fix:" + hashlib.sha256(f"{failed}\n{fixed}".encode()).hexdigest()[:16]
    if storage.promoted_memory.list_memories(include_archived=True, tag=tag):
        return None
    error = scrub(before.get("error") or before["status"])
    lineage = {"kind": "fail_then_fix", "events": [previous.uuid, item.uuid], "session_id": item.payload.get(
        "session_id"), "machine_id": item.machine_id}
    memory = storage.promoted_memory.create_memory(NewMemory(
        content=f"After `{failed}` failed ({error[:160]}), `{fixed}` worked.", tags=("passive", "fix", tag),
        confidence=CANDIDATE_CONFIDENCE, metadata=json.dumps(lineage, sort_keys=True)))
    return memory.memory_id


def _command(item: OutboxEvent | None) -> dict[str, Any] | None:
    facts = item.payload.get("tool_facts") if item is not None else None
    if not isinstance(facts, dict) or facts.get("tool") not in SHELL_TOOLS:
        return None
    if not isinstance(facts.get("command"), str) or not isinstance(facts.get("status"), str):
        return None
    return facts


def _program(command: str) -> str:
    words = command.split()
    return words[0] if words else ""
