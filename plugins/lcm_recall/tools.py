"""Handlers of the recall capabilities: validated arguments in, bounded JSON-ready dicts out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lcm_framework.plugin_api import LcmError

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import App

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
    data = {"id": hit.id, "kind": hit.kind, "conversation_id": hit.conversation_id,
            "created_at": hit.created_at.isoformat(), "score": round(hit.score, 4),
            "snippet": _clip(hit.snippet, MAX_SNIPPET)}
    if hit.subagent is not None:
        data["subagent"] = {"session_id": hit.subagent.session_id, "parent_session_id": hit.subagent.parent_session_id,
                            "tool_call_id": hit.subagent.tool_call_id, "agent_id": hit.subagent.agent_id}
    return data


def _flag(args: Mapping[str, Any], key: str, default: bool) -> bool:
    value = args.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolArgumentError(f"{key} must be true or false")
    return value


def lcm_grep(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.recall import Scope, grep_all, parse_since
    from lcm_framework.plugin_api.storage import SearchMode

    pattern = _text(args, "pattern")
    try:
        mode = SearchMode(args.get("mode") or "full_text")
        scope = Scope(args.get("scope") or "both")
    except ValueError as exc:
        raise ToolArgumentError(str(exc)) from None
    session = args.get("session")
    if session is not None and not isinstance(session, str):
        raise ToolArgumentError("session must be text")
    results = grep_all(app, pattern, all_projects=bool(args.get("all_projects")), session=session or None,
                       mode=mode, scope=scope, since=parse_since(args.get("since")),
                       limit=_int(args, "limit", 20, 1, MAX_LIMIT),
                       include_subagents=_flag(args, "include_subagents", True))
    projects = [{
        "project_id": result.project_id,
        "groups": [{"summary_id": g.summary_id, "hits": [_hit(h) for h in g.hits]} for g in result.groups],
        "summary_hits": [_hit(h) for h in result.summary_hits],
    } for result in results if result.total]
    return {"pattern": pattern, "mode": mode.value, "scope": scope.value, "projects": projects,
            "hint": "lcm_expand a summary_id with include_messages=true, or lcm_describe a msg_ id, for verbatim text"}


def lcm_search(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.recall import search_all

    query = _text(args, "query")
    ranked = search_all(app, query, all_projects=bool(args.get("all_projects")),
                        limit=_int(args, "limit", 10, 1, MAX_LIMIT),
                        include_subagents=_flag(args, "include_subagents", True))
    return {"query": query, "results": [
        {"rank": r.rank, "project_id": r.project_id, **_hit(r.hit), "covered_by": list(r.covered_by)}
        for r in ranked
    ]}


def lcm_describe(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.output import to_jsonable
    from lcm_framework.plugin_api.recall import describe, find_all, parse_ref

    ref = parse_ref(_text(args, "id"))
    max_chars = _int(args, "max_chars", 50_000, 100, MAX_CONTENT_CHARS)
    found = []
    for item in find_all(app, ref, lambda storage, ref: describe(storage, ref, app.config.home),
                         all_projects=bool(args.get("all_projects"))):
        data = to_jsonable(item)
        data["content_truncated"] = len(item.content) > max_chars
        data["content"] = item.content[:max_chars]
        found.append(data)
    return {"id": ref.text, "found": found}


def lcm_expand(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.output import to_jsonable
    from lcm_framework.plugin_api.recall import expand, find_all, parse_ref

    ref = parse_ref(_text(args, "id"))
    default_cap = int(app.config.get("compaction.max_expand_tokens"))
    cap = _int(args, "token_cap", default_cap, 100, max(default_cap, 100_000))
    depth = _int(args, "depth", 1, 1, 64)
    include = bool(args.get("include_messages"))
    found = find_all(app, ref, lambda storage, ref: expand(storage, ref, depth=depth, include_messages=include,
                                                            token_cap=cap),
                     all_projects=bool(args.get("all_projects")))
    return {"id": ref.text, "found": to_jsonable(found)}
