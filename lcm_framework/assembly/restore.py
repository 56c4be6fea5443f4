"""The context SessionStart hands back: what a new, resumed or compacted session receives.

The SessionStart hook's ``source`` (the agents send it) decides:

* ``startup`` / ``clear`` (a new session): the project's most recent other
  session (a sub-agent's run is part of the session that started it, never
  restored on its own) as it stands in LCM's context: its in-context summaries and the
  raw messages after them (the fresh tail, never compacted yet), so a short
  session that was never compacted is still carried over.
* ``compact`` (the agent just compacted this session): the session's own
  history as the context assembler selects it for the budget (the newest part
  at the finest level of the summary DAG that fits, no protected tail): what
  the agent's summary replaced.
* ``resume``: the session's own in-context summaries only (the agent reloads
  the raw transcript itself); nothing when LCM has none.
* no source (the ``/restore`` route): the session's own summaries when it has
  some, else as for a new session.

Items are taken newest first until the budget is spent (at most ``limit``
summaries); a message too large for what is left becomes a one-line reference
to it (``lcm_describe``). Everything is rendered under ``LCM_CONTEXT_HEADER``,
which the transcript formats recognise, so an agent writing this text into its
transcript never makes LCM import its own context again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..storage.models import ContextItem, ContextItemKind, Message, Summary
from ..transcripts.format_helpers import LCM_CONTEXT_HEADER
from .assemble import select_pieces
from .select import Piece

if TYPE_CHECKING:
    from ..memory.hints import Hint
    from ..storage.contracts import ProjectStorage

RECALL_POINTER = (
    "LCM keeps every message of this project losslessly. To recover details behind a summary use the "
    "MCP tools lcm_grep (search all stored messages and summaries), lcm_expand (expand a summary id to "
    "its sources) and lcm_describe (inspect a summary or stored file), or `lcm grep` / `lcm expand ID`."
)
REFERENCE_TOKENS = 24  # what the one-line reference to an oversized message costs
SESSION_START_TOKENS = 4000
SESSION_START_SUMMARIES = 12
"""What a SessionStart hook restores at most (``max_tokens``, ``limit``): the daemon, the hook's local restore
and ``lcm ui``'s SessionStart page use them."""


def restore(storage: ProjectStorage | None, session_id: str | None, *, max_tokens: int, limit: int,
            source: str | None = None, memories: Sequence[Hint] = ()) -> dict[str, Any]:
    """The restored context of ``session_id`` (``limit``: at most this many summaries) for the hook's ``source``,
    followed by ``memories`` (the project's highest-confidence memories, chosen by the caller). ``storage`` is
    ``None`` for a project nothing is stored for yet: only the memories are restored."""
    chosen: list[Summary | Message | tuple[Message, None]] = []
    origin, used = None, 0
    if storage is not None:
        items, origin = _items(storage, session_id, source, max_tokens)
        chosen, used = _within_budget(storage, items, max_tokens, limit)
    return {
        "session_id": session_id,
        "from_session": origin if chosen else None,
        "summaries": [_summary_head(s) for s in chosen if isinstance(s, Summary)],
        "messages": [m.message_id for m in chosen if isinstance(m, Message)],
        "memories": [m.id for m in memories],
        "context": render(chosen, origin if origin != session_id else None, memories),
        "tokens": used + sum(m.tokens for m in memories),
    }


def _items(storage: ProjectStorage, session_id: str | None, source: str | None,
           max_tokens: int) -> tuple[Sequence[ContextItem | Piece], str | None]:
    """The context items to restore for ``source`` and the session they come from."""
    own = session_conversation(storage, session_id) if session_id else None
    items: Sequence[ContextItem | Piece] = []
    if own is not None and source == "compact":  # what the agent's summary replaced, as the assembler shows it
        items = select_pieces(storage, own, budget=max_tokens, fresh_tail_count=0).pieces
    elif own is not None:
        items = [i for i in storage.context.list_items(own) if i.kind is ContextItemKind.SUMMARY]
    if items:
        return items, session_id
    if source not in ("resume", "compact"):  # the newest other session of the project, never a sub-agent's run
        conversations = storage.conversations
        for conversation in reversed(conversations.list_conversations()):
            if conversation.session_id != session_id and \
                    conversations.get_subagent_link(conversation.conversation_id) is None:
                items = storage.context.list_items(conversation.conversation_id)
                if items:
                    return items, conversation.session_id
    return [], None


def _within_budget(storage: ProjectStorage, items: Sequence[ContextItem | Piece], max_tokens: int,
                   limit: int) -> tuple[list[Summary | Message | tuple[Message, None]], int]:
    """Items newest first until ``max_tokens`` is spent (at most ``limit`` summaries), back in order, and the
    tokens they cost."""
    summaries = {s.summary_id: s for s in storage.summaries.get_summaries(
        [i.summary_id for i in items if i.summary_id])}
    messages = {m.message_id: m for m in storage.conversations.get_messages(
        [i.message_id for i in items if i.message_id is not None])}
    chosen: list[Summary | Message | tuple[Message, None]] = []
    used = 0
    for item in reversed(items):
        entry: Summary | Message | tuple[Message, None] | None
        if item.summary_id:
            entry = summaries.get(item.summary_id)
            if sum(isinstance(c, Summary) for c in chosen) >= limit:
                break
        else:
            entry = messages.get(item.message_id or -1)
        if entry is None:
            continue
        cost = _cost(entry)
        if used + cost > max_tokens and isinstance(entry, Message) and used + REFERENCE_TOKENS <= max_tokens:
            entry, cost = (entry, None), REFERENCE_TOKENS
        if used + cost > max_tokens:
            break
        chosen.append(entry)
        used += cost
    chosen.reverse()
    return chosen, used


def render(chosen: list[Summary | Message | tuple[Message, None]], other_session: str | None = None,
           memories: Sequence[Hint] = ()) -> str:
    if not chosen and not memories:
        return ""
    blocks = []
    for entry in chosen:
        if isinstance(entry, Summary):
            blocks.append(
                f'<summary id="{entry.summary_id}" kind="{entry.kind.value}" depth="{entry.depth}"'
                f' earliest_at="{_iso(entry.earliest_at)}" latest_at="{_iso(entry.latest_at)}">\n'
                f"{entry.content.strip()}\n</summary>")
        elif isinstance(entry, Message):
            blocks.append(f'<message id="msg_{entry.message_id}" role="{entry.role.value}" '
                          f'at="{_iso(entry.created_at)}">\n{entry.content.strip()}\n</message>')
        else:
            message = entry[0]
            blocks.append(f'<message id="msg_{message.message_id}" role="{message.role.value}" '
                          f'at="{_iso(message.created_at)}" omitted_tokens="{message.token_count}"/>')
    intro = [f"From the previous session {other_session} of this project:"] if other_session else []
    if memories:
        from ..memory.hints import block

        blocks.append("Memories of this project (lcm_feedback says whether one helped):")
        blocks.extend(block(m) for m in memories)
    return "\n".join([LCM_CONTEXT_HEADER, RECALL_POINTER, "", *intro, *blocks])


def session_conversation(storage: ProjectStorage, session_id: str) -> int | None:
    """The newest conversation of ``session_id`` (a session resumed after a clear has several), or None."""
    found = storage.conversations.find_conversations(session_id)
    return found[-1].conversation_id if found else None


def _cost(entry: Summary | Message) -> int:
    return entry.token_count or max(1, len(entry.content) // 4)


def _summary_head(s: Summary) -> dict[str, Any]:
    return {"summary_id": s.summary_id, "depth": s.depth, "kind": s.kind.value, "token_count": s.token_count,
            "earliest_at": _iso(s.earliest_at), "latest_at": _iso(s.latest_at)}


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""
