"""Which conversation each message of a file goes to: the session's own, or a sub-agent run's.

A file is either a session's own transcript, whose sidechain records
(``MappedRecord.subagent``) are sub-agent runs of their own, or one whole
sub-agent run (``SpawnedBy``: from its location, such as
``subagents/agent-<id>.jsonl``, or from a record, such as a session header naming its parent).
Each run is a conversation of its own, linked to the session that started it
(``lcm_framework.ingest.links``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..transcripts.contracts import MappedRecord, SpawnedBy
from .state import Counters


@dataclass(frozen=True, slots=True)
class RunLink:
    """What a run's conversation is linked to: the session that started it and the run's own id."""

    parent_session_id: str
    agent_id: str | None = None
    agent_type: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """A conversation messages go to: its session id, and its link when it is a sub-agent run."""

    session_id: str
    link: RunLink | None = None


def file_run(session_id: str, spawned_by: SpawnedBy | None) -> Run:
    """The conversation of a file's messages that belong to no sidechain."""
    if spawned_by is None:
        return Run(session_id)
    parent = spawned_by.parent_session_id or session_id
    own = session_id if spawned_by.own_session else f"{session_id}/agent-{spawned_by.agent_id}"
    return Run(own, RunLink(parent, spawned_by.agent_id, spawned_by.agent_type, spawned_by.tool_call_id))


class Runs:
    """The sidechain runs of one file: a record's run key (``None``: the file's own conversation).

    A run with an agent id is keyed by it; a run without one by the id of the
    record its chain starts at (records name their parent record). The keys
    seen so far live in ``Counters`` so a replay rebuilds them exactly.
    """

    def __init__(self, session_id: str, whole_file_is_a_run: bool) -> None:
        self.session_id = session_id
        self.whole_file = whole_file_is_a_run

    def key(self, mapped: MappedRecord, counters: Counters) -> str | None:
        ref = mapped.subagent
        if ref is None or self.whole_file:
            return None
        if ref.agent_id:
            key = f"agent-{ref.agent_id}"
        else:
            parent = ref.parent_record_id
            root = (counters.roots.get(parent) if parent else None) or (f"chain-{parent}" if parent else None)
            key = root or f"chain-{ref.record_id or 'unnamed'}"
        if ref.record_id:
            counters.roots[ref.record_id] = key
        return key

    def run(self, key: str) -> Run:
        """A sidechain run's conversation: ``<session>/sidechain-<agent id or first record id>``."""
        name = key.removeprefix("agent-").removeprefix("chain-")
        agent_id = name if key.startswith("agent-") else None
        return Run(f"{self.session_id}/sidechain-{name}", RunLink(self.session_id, agent_id))
