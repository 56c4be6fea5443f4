"""Codex's hook trust: which ``config.toml`` state makes Codex run LCM's hooks from ``hooks.json``.

Codex (``codex-rs/hooks/src/engine/discovery.rs``) runs a user hook only when
``[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]`` holds
``trusted_hash`` equal to the hook's current hash: ``sha256:`` + SHA-256 of
the compact, key-sorted JSON of ``{"event_name": <snake_case event>,
"matcher"?: ..., "hooks": [{"type": "command", "command", "timeout", "async"}]}``
(the handler normalized: timeout defaulting to 600 s, at least 1). Its TUI
writes that state after "Trust all and continue"; ``codex exec`` never asks and
runs no untrusted hook. A changed command (another LCM path) changes the hash,
so Codex stops running it until it is trusted again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api.agents import is_lcm_hook

STATE_TABLE = ("hooks", "state")


@dataclass(frozen=True, slots=True)
class TrustedHook:
    event: str
    key: str  # the hooks.state key
    hash: str  # the trusted_hash Codex expects


def event_label(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_hash(event: str, matcher: Any, handler: Mapping[str, Any]) -> str:
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    normalized: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(timeout if isinstance(timeout, int) else 600, 1),
        "async": handler.get("async") is True,
    }
    if isinstance(handler.get("statusMessage"), str):
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normalized]}
    if isinstance(matcher, str) and event not in ("UserPromptSubmit", "Stop"):
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def lcm_hooks(hooks_path: Path, data: Mapping[str, Any]) -> list[TrustedHook]:
    """The trust key and hash of every LCM hook in a parsed ``hooks.json``, at its current position."""
    found = []
    hooks = data.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(handler, dict) and isinstance(handler.get("command"), str) \
                        and is_lcm_hook(handler["command"]):
                    key = f"{hooks_path}:{event_label(event)}:{g}:{h}"
                    found.append(TrustedHook(event, key, hook_hash(event, group.get("matcher"), handler)))
    return found


def trust_problems(hooks: list[TrustedHook], config: Mapping[str, Any]) -> list[str]:
    """What keeps Codex from running these hooks, given the parsed ``config.toml`` (empty: all trusted)."""
    state = config.get("hooks", {}).get("state", {}) if isinstance(config.get("hooks"), dict) else {}
    problems = []
    for hook in hooks:
        entry = state.get(hook.key) if isinstance(state, dict) else None
        entry = entry if isinstance(entry, dict) else {}
        if entry.get("enabled") is False:
            problems.append(f"{hook.event} disabled")
        elif "trusted_hash" not in entry:
            problems.append(f"{hook.event} untrusted")
        elif entry["trusted_hash"] != hook.hash:
            problems.append(f"{hook.event} changed since it was trusted")
    return problems
