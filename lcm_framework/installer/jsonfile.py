"""Add and remove LCM's entries in a JSON hooks/settings document, keeping everything else.

The document is re-serialized with the indentation it already had, so a file
written the way the agents write theirs (``JSON.stringify(x, null, 2)``)
keeps every untouched byte, and install followed by uninstall restores
it exactly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import LcmError
from .command import is_lcm_hook, lcm_verb


@dataclass(frozen=True, slots=True)
class HookEntry:
    """One hook command under ``hooks.<event>``: the agent's event name, the command and its time limit."""

    event: str
    command: str
    timeout_s: int
    timeout_scale: int = 1
    """What the agent counts its ``timeout`` in: 1 for seconds, 1000 for milliseconds."""
    name: str | None = None
    """The hook's ``name``, for agents that show or toggle hooks by name."""

    def handler(self) -> dict[str, Any]:
        named = {"name": self.name} if self.name else {}
        return {"type": "command", **named, "command": self.command, "timeout": self.timeout_s * self.timeout_scale}


def load(text: str | None, what: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LcmError(f"{what} is not valid JSON ({exc}); fix or move it, then run the command again") from None
    if not isinstance(data, dict):
        raise LcmError(f"{what} does not hold a JSON object")
    return data


def dump(data: Mapping[str, Any], original: str | None) -> str:
    """Serialize like ``original`` (indent width or tab, final newline); 2 spaces for a new file."""
    indent: str | int = 2
    newline = True
    if original and original.strip():
        newline = original.endswith("\n")
        for line in original.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                indent = line[: len(line) - len(stripped)]
                break
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + ("\n" if newline else "")


def add_hooks(data: dict[str, Any], entries: Sequence[HookEntry]) -> None:
    """Append one matcher group per event holding LCM's command, unless an LCM hook is already there; an LCM
    hook for the same LCM event written by an earlier install (another ``lcm``, or without the options the
    integration writes now, such as its ``--protocol``) gets the command of this one."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise LcmError("the existing 'hooks' value is not an object; refusing to change it")
    for entry in entries:
        groups = hooks.setdefault(entry.event, [])
        if not isinstance(groups, list):
            raise LcmError(f"the existing hooks.{entry.event} value is not a list; refusing to change it")
        ours = [h for g in groups if isinstance(g, dict) for h in g.get("hooks") or [] if _is_ours(h)]
        if not ours:
            groups.append({"hooks": [entry.handler()]})
        for hook in ours:
            if hook["command"] != entry.command and _same_event(hook["command"], entry.command):
                hook["command"] = entry.command


def remove_hooks(data: dict[str, Any]) -> int:
    """Remove every LCM hook command; drop groups and events left empty by that. Returns how many."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not _is_ours(h)]
            removed += len(inner) - len(kept)
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept} if len(kept) != len(inner) else group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del data["hooks"]
    return removed


def add_mcp_server(data: dict[str, Any], name: str, spec: Mapping[str, Any]) -> str:
    """Add ``mcpServers[name]``; returns 'added', 'present' or 'conflict' (someone else's entry)."""
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise LcmError("the existing 'mcpServers' value is not an object; refusing to change it")
    current = servers.get(name)
    if current is None:
        servers[name] = dict(spec)
        return "added"
    return "present" if is_our_mcp(current) else "conflict"


def remove_mcp_server(data: dict[str, Any], name: str) -> bool:
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or not is_our_mcp(servers.get(name)):
        return False
    del servers[name]
    if not servers:
        del data["mcpServers"]
    return True


def is_our_mcp(spec: Any) -> bool:
    if not isinstance(spec, dict) or not isinstance(spec.get("command"), str):
        return False
    args = spec.get("args") or []
    verb = lcm_verb(" ".join([_quote(spec["command"]), *(_quote(str(a)) for a in args)]))
    return verb == ["mcp"]


def has_lcm_hooks(data: Mapping[str, Any]) -> set[str]:
    """Events that already run an LCM hook command."""
    hooks = data.get("hooks")
    found: set[str] = set()
    if isinstance(hooks, dict):
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                if isinstance(group, dict) and any(_is_ours(h) for h in group.get("hooks") or []):
                    found.add(event)
    return found


def _same_event(command: str, other: str) -> bool:
    """Whether two LCM hook commands run ``lcm hook`` for the same LCM event."""
    verb, wanted = lcm_verb(command) or [], lcm_verb(other) or []
    return len(verb) > 1 and verb[:2] == wanted[:2]


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and is_lcm_hook(hook["command"])


def _quote(value: str) -> str:
    import shlex

    return shlex.quote(value)
