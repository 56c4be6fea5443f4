"""Parse an agent's hook JSON (stdin) into the small event LCM forwards: ids and paths only.

The agent's hook protocol (``agents.contracts.HookProtocol``, imported by ``lcm hook --protocol MODULE``)
first reads the agent's JSON as LCM's hook JSON; without one the input is taken to be LCM's hook JSON
already (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``prompt`` and
``EXTRA_FIELDS``). This reader loads no plugin, so a hook never pays for loading them. A passive event
(PostToolUse) also keeps the capped facts of its tool call (``sync.facts``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..sync.facts import tool_facts
from ..transcripts.lcm_context import without_lcm_context
from .events import action_of

if TYPE_CHECKING:
    from pathlib import Path

    from ..agents.contracts import HookProtocol

MAX_STDIN_BYTES = 1024 * 1024
AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
"""What ``--agent`` accepts (a registered integration's name; ``lcm install`` writes only those)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
SUBAGENT_TRANSCRIPT = "subagent_transcript_path"
"""LCM's field for the sub-agent's own transcript a SubagentStop names."""
# Event-specific fields kept besides the common ones (short identifiers and paths, never content).
EXTRA_FIELDS = ("source", "trigger", "reason", "turn_id", "model", "agent_id", "agent_type", "stop_hook_active",
                SUBAGENT_TRANSCRIPT)


class PayloadError(ValueError):
    """The hook input is not a usable JSON object."""


class HookInput:
    """One parsed hook event (a plain class: dataclasses would cost start-up time on every turn)."""

    __slots__ = ("agent", "cwd", "event", "extra", "notes", "prompt", "session_id", "transcript_path")

    def __init__(self, *, agent: str | None, event: str, session_id: str | None, transcript_path: str | None,
                 cwd: str | None, extra: dict[str, Any], prompt: str | None = None,
                 notes: tuple[str, ...] = ()) -> None:
        self.agent = agent
        self.notes = notes  # what the reader repaired, for the hook to warn about
        self.prompt = prompt  # UserPromptSubmit: sent for recall, never forwarded or stored
        self.event = event
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.cwd = cwd
        self.extra = extra

    def forward(self, project: Path | None) -> dict[str, Any]:
        """The payload sent to the daemon or stored in the outbox."""
        body: dict[str, Any] = {"agent": self.agent, "session_id": self.session_id,
                                "transcript_path": self.transcript_path, "cwd": self.cwd}
        if project is not None:
            body["project"] = str(project)
        body.update(self.extra)
        return {k: v for k, v in body.items() if v is not None}


def parse(raw: bytes, *, event: str, agent: str | None, protocol: HookProtocol | None = None) -> HookInput:
    """The event in ``raw``, read through the agent's ``protocol`` when there is one; ``PayloadError`` (never
    another error) when it is no usable JSON object or the protocol cannot read it. Text that is not valid
    Unicode (a lone surrogate) or holds U+0000 counts as absent, except in the prompt, where lone surrogates
    become U+FFFD (``notes`` says so)."""
    if len(raw) > MAX_STDIN_BYTES:
        raise PayloadError(f"hook input larger than {MAX_STDIN_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except RecursionError:
        raise PayloadError("hook input is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadError(f"hook input is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PayloadError("hook input is not a JSON object")
    if protocol is not None:
        data = _read(protocol, event, data)
    named = _text(data.get("hook_event_name"))
    extra = {k: data[k] for k in EXTRA_FIELDS
             if isinstance(data.get(k), bool | int) or _text(data.get(k)) is not None}
    if action_of(event or named or "").action == "passive":
        facts = tool_facts(data)
        if facts is not None and not any(_SURROGATE.search(str(v)) or "\x00" in str(v) for v in facts.values()):
            extra["tool_facts"] = facts
    prompt = data.get("prompt")
    notes: tuple[str, ...] = ()
    if isinstance(prompt, str) and _SURROGATE.search(prompt):
        prompt = _SURROGATE.sub("\ufffd", prompt)
        notes = ("the prompt holds lone surrogates (not valid Unicode); recalled with U+FFFD in their place",)
    if isinstance(prompt, str):
        prompt = without_lcm_context(prompt)  # LCM's own context an agent glued to the prompt is not asked
    return HookInput(
        agent=agent,
        event=event or named or "",
        session_id=_text(data.get("session_id")),
        transcript_path=_text(data.get("transcript_path")),
        cwd=_text(data.get("cwd")),
        extra=extra,
        prompt=_text(prompt),
        notes=notes,
    )


def _read(protocol: HookProtocol, event: str, data: dict[str, Any]) -> dict[str, Any]:
    try:
        read = protocol.read(event, data)
    except Exception as exc:  # the agent plugin's code: its failure is a payload the hook ignores
        raise PayloadError(f"the agent's hook protocol could not read it ({type(exc).__name__}: "
                           f"{str(exc)[:200]})") from None
    if not isinstance(read, dict):
        raise PayloadError("the agent's hook protocol returned no JSON object")
    return read


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value and "\x00" not in value and not _SURROGATE.search(value):
        return value
    return None
