"""Handlers of the recall capabilities: validated arguments in, bounded JSON-ready dicts out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lcm_framework.errors import LcmError

if TYPE_CHECKING:
    from lcm_framework.app import App

MAX_LIMIT = 200
MAX_SNIPPET = 400
MAX_CONTENT_CHARS = 200_000


class ToolArgumentError(LcmError):
    exit_code = 2


def _int(args: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentError(f"{key} must be an integer")
    return max(low, min(high, value))


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolArgumentError(f"{key} is required (non-empty text)")
    return value


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _hit(hit: Any) -> dict[str, Any]:
    return {"id": hit.id, "kind": hit.kind, "conversation_id": hit.conversation_id,
            "created_at": hit.created_at.isoformat(), "score": round(hit.score, 4),
            "snippet": _clip(hit.snippet, MAX_SNIPPET)}


def lcm_grep(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.recall import RecallNotFoundError, Scope, grep, parse_since, project_scopes, resolve_session
    from lcm_framework.storage.models import SearchMode

    pattern = _text(args, "pattern")
    try:
        mode = SearchMode(args.get("mode") or "full_text")
        scope = Scope(args.get("scope") or "both")
    except ValueError as exc:
        raise ToolArgumentError(str(exc)) from None
    limit = _int(args, "limit", 20, 1, MAX_LIMIT)
    since = parse_since(args.get("since"))
    session = args.get("session")
    projects = []
    with project_scopes(app, bool(args.get("all_projects"))) as scopes:
        for storage in scopes:
            cids = None
            if session:
                try:
                    cids = [c.conversation_id for c in resolve_session(storage, str(session))]
                except RecallNotFoundError:
                    continue
            result = grep(storage, pattern, mode=mode, scope=scope, conversation_ids=cids, since=since, limit=limit)
            if result.total:
                projects.append({
                    "project_id": result.project_id,
                    "groups": [{"summary_id": g.summary_id, "hits": [_hit(h) for h in g.hits]} for g in result.groups],
                    "summary_hits": [_hit(h) for h in result.summary_hits],
                })
    return {"pattern": pattern, "mode": mode.value, "scope": scope.value, "projects": projects,
            "hint": "lcm_expand a summary_id with include_messages=true, or lcm_describe a msg_ id, for verbatim text"}


def lcm_search(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.recall import project_scopes, search

    query = _text(args, "query")
    limit = _int(args, "limit", 10, 1, MAX_LIMIT)
    ranked = []
    with project_scopes(app, bool(args.get("all_projects"))) as scopes:
        for storage in scopes:
            ranked.extend(search(storage, query, limit=limit))
    ranked.sort(key=lambda r: (-r.hit.score, -r.hit.created_at.timestamp(), r.hit.id))
    return {"query": query, "results": [
        {"rank": n, "project_id": r.project_id, **_hit(r.hit), "covered_by": list(r.covered_by)}
        for n, r in enumerate(ranked[:limit], start=1)
    ]}


def lcm_describe(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.jsonable import to_jsonable
    from lcm_framework.recall import describe, parse_ref, project_scopes

    ref = parse_ref(_text(args, "id"))
    max_chars = _int(args, "max_chars", 50_000, 100, MAX_CONTENT_CHARS)
    found = []
    with project_scopes(app, bool(args.get("all_projects"))) as scopes:
        for storage in scopes:
            item = describe(storage, ref, app.config.home)
            if item is not None:
                data = to_jsonable(item)
                data["content_truncated"] = len(item.content) > max_chars
                data["content"] = item.content[:max_chars]
                found.append(data)
    return {"id": ref.text, "found": found}


def lcm_expand(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.jsonable import to_jsonable
    from lcm_framework.recall import expand, parse_ref, project_scopes

    ref = parse_ref(_text(args, "id"))
    default_cap = int(app.config.get("compaction.max_expand_tokens"))
    cap = _int(args, "token_cap", default_cap, 100, max(default_cap, 100_000))
    depth = _int(args, "depth", 1, 1, 64)
    include = bool(args.get("include_messages"))
    found = []
    with project_scopes(app, bool(args.get("all_projects"))) as scopes:
        for storage in scopes:
            result = expand(storage, ref, depth=depth, include_messages=include, token_cap=cap)
            if result is not None:
                found.append(to_jsonable(result))
    return {"id": ref.text, "found": found}
