"""The one JSON shape of search results (``operations.recall.SearchFound``): what ``lcm search --json`` prints,
the ``lcm_search`` tool and ``POST /search`` return."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .search import Ranked

if TYPE_CHECKING:
    from ..app import App


def iso(moment: datetime) -> str:
    """UTC to the second, ``Z``-suffixed: the shortest unambiguous ISO 8601 form."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def project_roots(app: App, project_ids: Sequence[str]) -> dict[str, str | None]:
    """The root path of each project id (None when no project under ``$LCM_HOME`` has it)."""
    here = app.project_ref()
    roots: dict[str, str | None] = {here.project_id: here.root}
    if not set(project_ids) <= set(roots):
        roots.update((ref.project_id, ref.root) for ref in app.storage.list_projects())
    return {pid: roots.get(pid) for pid in project_ids}


def result_row(r: Ranked, *, with_project: bool) -> dict[str, Any]:
    """One result: id (its prefix says its kind: ``msg_``, ``sum_``, ``mem_``), relevance (``score``, 0..1),
    date (a summary's is its covered ``span``), speaker, the best sentences (``snippet``), neighbouring turns
    (``context``), a summary's best-matching messages (``hits``), covering summaries. The list's order is the
    rank. Keys without a value are left out (an agent reads every character); ``session_id`` names a main
    session's hit (``lcm context`` takes it), ``lcm_describe`` of the id gives everything else."""
    hit = r.hit
    row: dict[str, Any] = {"id": hit.id, "score": round(hit.score, 3)}
    if r.span is None:
        row["created_at"] = iso(hit.created_at)
    if with_project:
        row["project_id"] = r.project_id
    if hit.session_id is not None and hit.subagent is None:  # a sub-agent run's hit names it under "subagent"
        row["session_id"] = hit.session_id
    if r.role is not None:
        row["role"] = r.role
    if r.span is not None:
        row["span"] = [iso(r.span[0]), iso(r.span[1])]
    row["snippet"] = hit.snippet
    if r.context:
        row["context"] = [{"id": t.id, "role": t.role, "text": t.text} for t in r.context]
    if r.hits:
        row["hits"] = [{"id": t.id, "role": t.role, "created_at": iso(t.created_at), "text": t.text} for t in r.hits]
    if r.covered_by:
        row["covered_by"] = list(r.covered_by)
    if hit.subagent is not None:
        row["subagent"] = {"session_id": hit.subagent.session_id, "parent_session_id": hit.subagent.parent_session_id,
                           "tool_call_id": hit.subagent.tool_call_id, "agent_id": hit.subagent.agent_id}
    return row


def search_document(query: str, ranked: Sequence[Ranked], roots: Mapping[str, str | None], *,
                    all_projects: bool) -> dict[str, Any]:
    """``{"query", "projects": [{"project_id", "root"}], "results": [...]}``: the projects holding results
    once (``roots``: ``project_roots`` of them), each result with ``project_id`` only when several projects were
    searched."""
    ids = list(dict.fromkeys(r.project_id for r in ranked))
    return {"query": query, "projects": [{"project_id": pid, "root": roots.get(pid)} for pid in ids],
            "results": [result_row(r, with_project=all_projects) for r in ranked]}
