"""Link sub-agent runs to the tool call that started them, whichever file arrives first.

A run's conversation gets its ``SubagentLink`` when its first messages are
stored: the parent session, the run's agent id, the call when its file names
it, and the SHA-256 of its first user message (the prompt it was given). The
parent message holding the call is found through the format's ``spawn``: that
call, else a call whose prompt has that digest, or a result naming that agent
id. A link is complete once it names the parent message. When the run arrives after its parent, the spawns
among the parent's stored messages are looked up in a ``SpawnIndex``, which
reads each parent message once per import run however many runs it started;
when the parent's call arrives later, the batch that stores it completes the
links still waiting for it. Everything happens inside the batch's transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from ..storage.contracts import Repositories
from ..storage.models import NewMessage, Role, SubagentLink
from ..transcripts.contracts import PartView, Spawn
from ..transcripts.format_helpers import prompt_sha256
from .runs import Run

SpawnOf = Callable[[PartView], Spawn | None]


def _matches(link: SubagentLink, spawn: Spawn) -> bool:
    if link.tool_call_id:  # the run's file named its call: only that call's parts
        return spawn.tool_call_id == link.tool_call_id
    return bool((link.agent_id and spawn.agent_id == link.agent_id)
                or (link.prompt_sha256 and spawn.prompt_sha256 == link.prompt_sha256))


def _complete(repos: Repositories, link: SubagentLink, spawn: Spawn, conversation_id: int,
              message_id: int) -> SubagentLink:
    return repos.conversations.link_subagent(dataclasses.replace(
        link, parent_conversation_id=conversation_id, parent_message_id=message_id, tool_call_id=spawn.tool_call_id,
        agent_type=link.agent_type or spawn.agent_type))


class SpawnIndex:
    """The spawns among each parent conversation's stored messages, kept for one import run: a lookup reads
    only the messages stored since the previous one (a conversation's messages are appended in seq order).

    What it holds may come from a transaction that rolled back: ``forget`` it then.
    """

    def __init__(self) -> None:
        self._read: dict[int, tuple[int, list[tuple[int, Spawn]]]] = {}
        """conversation id -> (seq of the next message to read, its ``(message id, spawn)`` so far)."""
        self.linked: set[int] = set()
        """Run conversations whose link is stored: their later batches need not look it up."""

    def spawns(self, repos: Repositories, conversation_id: int, spawn_of: SpawnOf) -> list[tuple[int, Spawn]]:
        """The ``(message id, spawn)`` pairs of the conversation's stored messages, in seq order."""
        next_seq, found = self._read.get(conversation_id, (0, []))
        stored = repos.conversations.list_messages(conversation_id, after_seq=next_seq - 1 if next_seq else None)
        if stored:
            parts = repos.conversations.list_parts([m.message_id for m in stored])
            found = found + [(message.message_id, spawn) for message in stored
                             for part in parts.get(message.message_id, []) if (spawn := spawn_of(part)) is not None]
            next_seq = stored[-1].seq + 1
        self._read[conversation_id] = (next_seq, found)
        return found

    def forget(self) -> None:
        self._read.clear()
        self.linked.clear()


def record_run(repos: Repositories, conversation_id: int, run: Run, messages: Sequence[NewMessage],
               spawn_of: SpawnOf | None, index: SpawnIndex) -> None:
    """Store the link of a run's conversation the first time it gets messages (``messages`` are this batch's,
    in seq order), then look for the call that started it among the parent's stored messages."""
    if run.link is None or conversation_id in index.linked:
        return
    if repos.conversations.get_subagent_link(conversation_id) is not None:
        index.linked.add(conversation_id)
        return
    first = messages[0] if messages and messages[0].seq == 0 and messages[0].role is Role.USER else None
    link = repos.conversations.link_subagent(SubagentLink(
        conversation_id, run.link.parent_session_id, run.link.agent_id, run.link.agent_type,
        prompt_sha256(first.content) if first is not None else None, tool_call_id=run.link.tool_call_id))
    index.linked.add(conversation_id)
    if spawn_of is None:
        return
    taken = _taken(repos.conversations.list_subagent_links(parent_session_id=link.parent_session_id))
    for parent in repos.conversations.find_conversations(link.parent_session_id):
        for message_id, spawn in index.spawns(repos, parent.conversation_id, spawn_of):
            if spawn.tool_call_id not in taken and _matches(link, spawn):
                _complete(repos, link, spawn, parent.conversation_id, message_id)
                return


def link_spawns(repos: Repositories, parent_session_id: str, conversation_id: int,
                stored: Iterable[tuple[int, NewMessage]], spawn_of: SpawnOf | None) -> None:
    """Complete the links of runs still waiting for their call with the spawns among the parent's new
    messages (``(message_id, message)`` pairs)."""
    if spawn_of is None:
        return
    spawns = [(mid, spawn) for mid, msg in stored for part in msg.parts if (spawn := spawn_of(part)) is not None]
    if not spawns:
        return
    links = repos.conversations.list_subagent_links(parent_session_id=parent_session_id)
    taken = _taken(links)
    for link in links:
        if link.parent_message_id is not None:
            continue
        for mid, spawn in spawns:
            if spawn.tool_call_id not in taken and _matches(link, spawn):
                _complete(repos, link, spawn, conversation_id, mid)
                taken.add(spawn.tool_call_id)
                break


def known_spawns(spawn_of: SpawnOf | None, messages: Iterable[NewMessage]) -> SpawnOf | None:
    """``spawn_of`` with the answers for the parts of ``messages`` found now (before the batch's
    transaction, which then only looks them up); any other part is asked when it comes."""
    if spawn_of is None:
        return None
    found = {id(part): (part, spawn_of(part)) for message in messages for part in message.parts}

    def known(part: PartView) -> Spawn | None:
        hit = found.get(id(part))
        return hit[1] if hit is not None and hit[0] is part else spawn_of(part)

    return known


def _taken(links: Iterable[SubagentLink]) -> set[str]:
    """Tool calls already linked to a run (two runs given the same prompt go to two calls)."""
    return {link.tool_call_id for link in links if link.parent_message_id is not None and link.tool_call_id}
