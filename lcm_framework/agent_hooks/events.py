"""LCM's own hook events: what each one does. Agents' event names are their plugins' (``HookEvent.native``).

``lcm hook EVENT`` and the daemon's ``/hook`` route take these names; an agent integration installs LCM's
command for each under its agent's own event name, and its hook protocol (``agents.contracts.HookProtocol``)
reads that agent's hook JSON into LCM's and writes LCM's answer the way the agent reads it.
"""

from __future__ import annotations


class EventAction:
    """What an LCM event does (a plain class: the hook imports this on every turn).

    ``action``: ``restore`` (ingest what is there, then answer with the restored context), ``ingest`` or
    ``passive`` (a tool call's capped facts, captured in the outbox and promoted by the daemon's consumer).
    ``compact``: the compaction an ingest schedules (``incremental``/``full``). ``before_transcript``: the agent
    may send it before it writes a new session's transcript (a missing one is nothing to ingest yet).
    ``answers``: it prints context for the agent (restored context, or the prompt's recall)."""

    __slots__ = ("action", "answers", "before_transcript", "compact")

    def __init__(self, action: str, compact: str | None = None, *, before_transcript: bool = False,
                 answers: bool = False) -> None:
        self.action = action
        self.compact = compact
        self.before_transcript = before_transcript
        self.answers = answers


SESSION_START = "SessionStart"
PROMPT = "UserPromptSubmit"
TOOL_USE = "PostToolUse"

EVENTS: dict[str, EventAction] = {
    SESSION_START: EventAction("restore", before_transcript=True, answers=True),
    PROMPT: EventAction("ingest", before_transcript=True, answers=True),
    "Stop": EventAction("ingest", "incremental"),
    "SubagentStop": EventAction("ingest"),
    "PreCompact": EventAction("ingest", "full"),
    "PostCompact": EventAction("ingest"),
    "SessionEnd": EventAction("ingest", "full"),
    TOOL_USE: EventAction("passive"),  # passive learning only (sync.learning); the next Stop ingests
}
"""LCM's events by name. An event not listed here ingests the session's transcript (``OTHER``)."""
OTHER = EventAction("ingest")


def action_of(event: str) -> EventAction:
    return EVENTS.get(event, OTHER)
