"""Handlers of the memory capabilities ``lcm_store`` and ``lcm_feedback`` (the core memory actions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lcm_framework.plugin_api.app import App

SUMMARY_PREFIX = "sum_"


def lcm_store(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.recall import run_memory_action

    done = run_memory_action(app, "add", {**args, "origin": "mcp"})
    return {k: done[k] for k in ("id", "created", "confidence", "tags")}


def lcm_feedback(app: App, args: Mapping[str, Any]) -> dict[str, Any]:
    from lcm_framework.plugin_api.recall import memory_scope, run_memory_action

    ref = args.get("id")
    if isinstance(ref, str) and ref.startswith(SUMMARY_PREFIX) and isinstance(args.get("useful"), bool):
        with memory_scope(app) as scope:
            scope.storage.recall.record_feedback(ref, useful=bool(args["useful"]))
        return {"id": ref, "useful": args["useful"]}
    done = run_memory_action(app, "feedback", args)
    return {k: done[k] for k in ("id", "useful", "confidence")}
