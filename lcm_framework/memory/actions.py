"""The memory verbs as JSON-in, JSON-out actions: one implementation behind the CLI, the daemon and MCP.

Each action takes the ``App`` and a mapping of arguments (``id``, ``text``, ``tags``, ``user_wide`` ...) and
returns a JSON-ready dict. ``user_wide`` (or a ``gmem_`` id) selects the user-wide scope.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import LcmError
from ..jsonable import to_jsonable
from ..storage.lineage import Lineage, parse
from . import store
from .scope import MemoryScope, existing_memory_scope, memory_scope

if TYPE_CHECKING:
    from ..app import App
    from ..storage.models import Memory

Args = Mapping[str, Any]
MAX_TAGS = 20


class MemoryArgumentError(LcmError):
    exit_code = 2
    code = "invalid_argument"


def row(scope: MemoryScope, memory: Memory) -> dict[str, Any]:
    data = dict(to_jsonable(memory))
    data["id"] = scope.ref(memory.memory_id)
    data["scope"] = "user" if scope.user_wide else "project"
    data["lineage"] = to_jsonable(parse(memory.metadata))
    return data


def _id(args: Args, scope: MemoryScope) -> int:
    ref = _text(args, "id")
    memory_id, user_wide = store.parse_memory_ref(ref)
    if scope.user_wide and not user_wide and not ref.isdigit():
        raise store.MemoryRefError(f"{ref} is a project memory: drop --global")
    return memory_id


def _text(args: Args, key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise MemoryArgumentError(f"{key} is required (non-empty text)")
    return value


def _tags(args: Args) -> list[str]:
    tags = args.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags) or len(tags) > MAX_TAGS:
        raise MemoryArgumentError(f"tags must be a list of at most {MAX_TAGS} non-empty strings")
    return tags


def _confidence(args: Args, key: str, default: float | None) -> float | None:
    value = args.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise MemoryArgumentError(f"{key} must be a number in 0..1")
    return float(value)


def _positive(args: Args, key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MemoryArgumentError(f"{key} must be a positive integer")
    return value


def add(scope: MemoryScope, args: Args) -> dict[str, Any]:
    origin = args.get("origin") if isinstance(args.get("origin"), str) else "user"
    stored = store.remember(scope.storage, _text(args, "text"), scrubber=scope.scrubber(), tags=_tags(args),
                            confidence=_confidence(args, "confidence", None), lineage=Lineage(origin=str(origin)))
    return {**row(scope, stored.memory), "created": stored.created}


def list_(scope: MemoryScope, args: Args) -> dict[str, Any]:
    tag = args.get("tag")
    memories = scope.storage.promoted_memory.list_memories(include_archived=bool(args.get("archived")),
                                                           tag=tag if isinstance(tag, str) else None)
    return {"memories": [row(scope, m) for m in memories]}


def show(scope: MemoryScope, args: Args) -> dict[str, Any]:
    memory = store.get(scope.storage, _id(args, scope))
    return {**row(scope, memory), "recall": to_jsonable(scope.storage.recall.stats(scope.ref(memory.memory_id)))}


def search(scope: MemoryScope, args: Args) -> dict[str, Any]:
    found = store.search(scope.storage, _text(args, "query"), limit=_positive(args, "limit", 20))
    return {"memories": [{**row(scope, m), "score": score} for m, score in found]}


def archive(scope: MemoryScope, args: Args) -> dict[str, Any]:
    return row(scope, scope.storage.promoted_memory.archive(store.get(scope.storage, _id(args, scope)).memory_id))


def revive(scope: MemoryScope, args: Args) -> dict[str, Any]:
    return row(scope, scope.storage.promoted_memory.revive(store.get(scope.storage, _id(args, scope)).memory_id))


def forget(scope: MemoryScope, args: Args) -> dict[str, Any]:
    memory_id = _id(args, scope)
    store.forget(scope.storage, memory_id, scope.ref(memory_id))
    return {"forgotten": scope.ref(memory_id)}


def review(scope: MemoryScope, args: Args) -> dict[str, Any]:
    stale = store.review(scope.storage, older_than_days=_positive(args, "days", store.REVIEW_AGE_DAYS),
                         max_confidence=_confidence(args, "max_confidence", store.REVIEW_MAX_CONFIDENCE) or 0.0,
                         prefix=scope.prefix)
    if args.get("archive"):
        stale = [scope.storage.promoted_memory.archive(m.memory_id) for m in stale]
    return {"archived": bool(args.get("archive")), "candidates": [row(scope, m) for m in stale]}


def feedback(scope: MemoryScope, args: Args) -> dict[str, Any]:
    useful = args.get("useful")
    if not isinstance(useful, bool):
        raise MemoryArgumentError("useful must be true or false")
    memory_id = _id(args, scope)
    return {**row(scope, store.feedback(scope.storage, memory_id, scope.ref(memory_id), useful=useful)),
            "useful": useful}


def stats(scope: MemoryScope, args: Args) -> dict[str, Any]:
    return {"memories": [
        {"id": scope.ref(s.memory.memory_id), "content": s.memory.content, "confidence": s.memory.confidence,
         "archived": s.memory.archived, "surfaced": s.recall.surfaced, "useful": s.recall.useful,
         "not_useful": s.recall.not_useful, "last_surfaced_at": to_jsonable(s.recall.last_surfaced_at)}
        for s in store.stats(scope.storage, prefix=scope.prefix, include_archived=bool(args.get("archived")))
    ]}


ACTIONS: dict[str, Callable[[MemoryScope, Args], dict[str, Any]]] = {
    "add": add, "list": list_, "show": show, "search": search, "archive": archive, "revive": revive,
    "review": review, "forget": forget, "feedback": feedback, "stats": stats,
}


def run(app: App, action: str, args: Args) -> dict[str, Any]:
    """Run one memory action in the scope its arguments name."""
    found = ACTIONS.get(action)
    if found is None:
        raise MemoryArgumentError(f"unknown memory action {action!r} (known: {', '.join(ACTIONS)})")
    user_wide = bool(args.get("user_wide")) or str(args.get("id") or "").startswith(store.GLOBAL_PREFIX)
    if action in CREATING:
        with memory_scope(app, user_wide=user_wide) as scope:
            return found(scope, args)
    with existing_memory_scope(app, user_wide=user_wide) as existing:
        return found(existing, args) if existing is not None else nothing_stored(action, args)


CREATING = frozenset({"add"})
"""The actions that store a memory in a scope with nothing in it yet; the others never create the scope."""


def nothing_stored(action: str, args: Args) -> dict[str, Any]:
    """What an action other than ``add`` answers in a scope that holds nothing (its arguments still checked)."""
    if action == "search":
        _text(args, "query")
    if action in ("list", "search", "stats"):
        return {"memories": []}
    if action == "review":
        return {"archived": bool(args.get("archive")), "candidates": []}
    ref = _text(args, "id")
    store.parse_memory_ref(ref)
    raise store.MemoryNotFoundError(f"no memory {ref} in this scope: nothing is stored there yet")
