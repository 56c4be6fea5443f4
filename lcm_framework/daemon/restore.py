"""The context SessionStart hands back: what a new, resumed or compacted session receives.

* A session LCM has summaries for (resumed after compaction, or compacted by
  the agent) gets its own in-context summaries, newest first within the budget.
* Any other session (new, or resumed with nothing compacted) gets the
  project's most recent other conversation as it stands in LCM's context: its
  in-context summaries and the raw messages after them (the fresh tail, never
  compacted yet), taken newest first until the budget is spent, so a short
  session that was never compacted is still carried over. A message too large
  for what is left is replaced by a one-line reference to it (``lcm_describe``).

Everything is rendered under ``LCM_CONTEXT_HEADER``, which the transcript
formats recognise, so an agent writing this text into its transcript never
makes LCM import its own context again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..storage.models import ContextItem, ContextItemKind, Message, Summary
from ..transcripts.format_helpers import LCM_CONTEXT_HEADER

if TYPE_CHECKING:
    from ..storage.contracts import ProjectStorage

RECALL_POINTER = (
    "LCM keeps every message of this project losslessly. To recover details behind a summary use the "
    "MCP tools lcm_grep (search all stored messages and summaries), lcm_expand (expand a summary id to "
    "its sources) and lcm_describe (inspect a summary or stored file), or `lcm grep` / `lcm expand ID`."
)
REFERENCE_TOKENS = 24  # what the one-line reference to an oversized message costs


def restore(storage: ProjectStorage, session_id: str | None, *, max_tokens: int, limit: int) -> dict[str, Any]:
    """The restored context of ``session_id`` (``limit``: at most this many summaries)."""
    own = _conversation(storage, session_id) if session_id else None
    items: list[ContextItem] = []
    source = None
    if own is not None:
        items = [i for i in storage.context.list_items(own) if i.kind is ContextItemKind.SUMMARY]
        source = session_id if items else None
    if not items:
        for conversation in reversed(storage.conversations.list_conversations()):
            if conversation.session_id != session_id:
                items = storage.context.list_items(conversation.conversation_id)
                if items:
                    source = conversation.session_id
                    break
    summaries = {s.summary_id: s for s in storage.summaries.get_summaries(
        [i.summary_id for i in items if i.summary_id])}
    messages = {m.message_id: m for m in storage.conversations.get_messages(
        [i.message_id for i in items if i.message_id is not None])}
    chosen: list[Summary | Message | tuple[Message, None]] = []
    used = 0
    for item in reversed(items):  # newest first until the budget is spent
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
    return {
        "session_id": session_id,
        "from_session": source if chosen else None,
        "summaries": [_summary_head(s) for s in chosen if isinstance(s, Summary)],
        "messages": [m.message_id for m in chosen if isinstance(m, Message)],
        "context": render(chosen, source if source != session_id else None),
        "tokens": used,
    }


def render(chosen: list[Summary | Message | tuple[Message, None]], other_session: str | None = None) -> str:
    if not chosen:
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
    return "\n".join([LCM_CONTEXT_HEADER, RECALL_POINTER, "", *intro, *blocks])


def _conversation(storage: ProjectStorage, session_id: str) -> int | None:
    found = storage.conversations.find_conversations(session_id)
    return found[-1].conversation_id if found else None


def _cost(entry: Summary | Message) -> int:
    return entry.token_count or max(1, len(entry.content) // 4)


def _summary_head(s: Summary) -> dict[str, Any]:
    return {"summary_id": s.summary_id, "depth": s.depth, "kind": s.kind.value, "token_count": s.token_count,
            "earliest_at": _iso(s.earliest_at), "latest_at": _iso(s.latest_at)}


def _iso(value: Any) -> str:
    return value.isoformat() if value is not None else ""
