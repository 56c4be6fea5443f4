"""Local passive learning: what the daemon's consumer promotes from one PostToolUse event.

A command that failed, followed in the same session by a successful command of the same program (its
first word), becomes a memory candidate: "after `X` failed (error), `Y` worked", with the two events'
uuids as its lineage. Texts are scrubbed with the project's scrubber before they are stored. The same
pair is remembered once (``store.remember``-style tag dedup).

Two files edited together in ``CO_EDIT_SESSIONS`` sessions become one candidate too
(``remember_co_edit``): with a team inbox, counted across every machine when each event is applied
(``effects.team_learning``); without one (SQLite), from the edits this machine's outbox still keeps
(``co_edited_here``, the consumer's retention window: a week).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from ..outbox import OutboxEvent
from ..storage.contracts import ProjectStorage, PromotedMemoryRepository
from ..storage.models import NewMemory
from .transport import relative

CANDIDATE_CONFIDENCE = 0.3
CO_EDIT_SESSIONS = 3
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell", "run_shell_command"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "edit", "write"})


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
    if not isinstance(facts, dict) or not (facts.get("kind") == "shell" or facts.get("tool") in SHELL_TOOLS):
        return None
    if not isinstance(facts.get("command"), str) or not isinstance(facts.get("status"), str):
        return None
    return facts


def _program(command: str) -> str:
    words = command.split()
    return words[0] if words else ""


def edited_files(item: OutboxEvent) -> list[str]:
    """The files a successful edit event touched, relative to its project root; none for any other event."""
    facts = item.payload.get("tool_facts")
    root = item.payload.get("project")
    if not isinstance(facts, dict) or not (facts.get("kind") == "edit" or facts.get("tool") in EDIT_TOOLS) \
            or facts.get("status") != "ok" or not isinstance(root, str):
        return []
    files = facts.get("files")
    return list(dict.fromkeys(relative(root, f) for f in files if isinstance(f, str) and f)) \
        if isinstance(files, list) else []


def co_edited_here(storage: ProjectStorage, item: OutboxEvent, kept: Sequence[OutboxEvent]) -> list[int]:
    """The candidates ``item`` completes from the edit events ``kept`` (this machine's; those captured up to
    ``item`` count, so the candidate names the edit that completed it whenever the consumer gets to it):
    each pair of files ``item`` and another edit of a session touched, edited in ``CO_EDIT_SESSIONS``
    sessions, once."""
    mine = edited_files(item)
    if not mine:
        return []
    sessions: dict[str, set[str]] = {}
    for event in kept:
        session = event.payload.get("session_id")
        if isinstance(session, str) and event.seq <= item.seq:
            sessions.setdefault(session, set()).update(edited_files(event))
    pairs = {(min(a, b), max(a, b)) for files in sessions.values() for a in mine if a in files for b in files
             if b != a}
    created: list[int] = []
    for pair in sorted(pairs):
        count = sum(1 for files in sessions.values() if pair[0] in files and pair[1] in files)
        if count >= CO_EDIT_SESSIONS:
            found = remember_co_edit(storage.promoted_memory, pair, count, [item.uuid], team=False)
            if found is not None:
                created.append(found)
    return created


def remember_co_edit(memories: PromotedMemoryRepository, pair: tuple[str, str], sessions: int,
                     events: Sequence[str], *, team: bool) -> int | None:
    """The memory id of a new "usually changed together" candidate for ``pair``, or None when one exists."""
    tag = "co-edit:" + hashlib.sha256("\n".join(pair).encode()).hexdigest()[:16]
    if memories.list_memories(include_archived=True, tag=tag):
        return None
    lineage = {"kind": "co_edit", "files": list(pair), "sessions": sessions, "events": list(events)}
    where = "sessions across the team" if team else "sessions"
    memory = memories.create_memory(NewMemory(
        content=f"{pair[0]} and {pair[1]} are usually changed together ({sessions} {where} edited both)",
        tags=("passive", "co-edit", tag), confidence=CANDIDATE_CONFIDENCE,
        metadata=json.dumps(lineage, sort_keys=True)))
    return memory.memory_id
