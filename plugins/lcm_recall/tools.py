"""Handlers of the recall capabilities: arguments checked and completed by the core
(``lcm_framework.capabilities.bind``, from ``lcm_framework.recall_arguments``), bounded JSON-ready dicts out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import App

MAX_SNIPPET = 400


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


def lcm_grep(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.recall import Scope, grep_all, parse_since
    from lcm_framework.plugin_api.storage import SearchMode

    mode, scope = SearchMode(args["mode"]), Scope(args["scope"])
    results = grep_all(app, args["pattern"], all_projects=args["all_projects"], session=args.get("session") or None,
                       mode=mode, scope=scope, since=parse_since(args.get("since")), limit=args["limit"],
                       include_subagents=args["include_subagents"])
    projects = [{
        "project_id": result.project_id,
        "groups": [{"summary_id": g.summary_id, "hits": [_hit(h) for h in g.hits]} for g in result.groups],
        "summary_hits": [_hit(h) for h in result.summary_hits],
    } for result in results if result.total]
    return {"pattern": args["pattern"], "mode": mode.value, "scope": scope.value, "projects": projects,
            "hint": "lcm_expand a summary_id with include_messages=true, or lcm_describe a msg_ id, for verbatim text"}


def lcm_search(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.recall import search_all, search_document

    ranked = search_all(app, args["query"], all_projects=args["all_projects"], limit=args["limit"],
                        include_subagents=args["include_subagents"], context=args["context"])
    return search_document(app, args["query"], ranked, all_projects=args["all_projects"])


def lcm_describe(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.output import to_jsonable
    from lcm_framework.plugin_api.recall import describe, find_all, parse_ref

    ref = parse_ref(args["id"])
    max_chars = args["max_chars"]
    found = []
    for item in find_all(app, ref, lambda storage, ref: describe(storage, ref, app.config.home),
                         all_projects=args["all_projects"]):
        data = to_jsonable(item)
        data["content_truncated"] = len(item.content) > max_chars
        data["content"] = item.content[:max_chars]
        found.append(data)
    return {"id": ref.text, "found": found}


def lcm_expand(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.output import to_jsonable
    from lcm_framework.plugin_api.recall import expand, find_all, parse_ref

    ref = parse_ref(args["id"])
    cap = args.get("token_cap") or int(app.config.get("compaction.max_expand_tokens"))
    found = find_all(app, ref, lambda storage, ref: expand(storage, ref, depth=args["depth"],
                                                            include_messages=args["include_messages"], token_cap=cap),
                     all_projects=args["all_projects"])
    return {"id": ref.text, "found": to_jsonable(found)}
