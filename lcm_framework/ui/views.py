"""The explorer's pages that combine verbs of the operations layer: context preview, SessionStart, search,
memories and health.

Each function returns a frozen result (rendered as a page, or as its JSON at the same path + ``.json``) built
from the verbs' results, the ones ``lcm context``, ``search``, ``grep``, ``memory``, ``doctor`` and ``status``
render.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..jsonable import to_jsonable

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..storage.models import ProjectRef, StorageUsage

SEARCH_LIMIT = 20
GREP_LIMIT = 50
MEMORIES_PAGE = 50


@dataclass(frozen=True, slots=True)
class ContextItemView:
    kind: str  # "summary" | "message"
    id: str
    tokens: int
    fresh_tail: bool


@dataclass(frozen=True, slots=True)
class ContextPreview:
    project_id: str
    session_id: str
    budget: int
    default_budget: int
    token_estimate: int
    fresh_tail_tokens: int
    over_budget: bool
    items: tuple[ContextItemView, ...]
    messages: tuple[dict[str, Any], ...]
    """What the model is handed, as ``lcm context --json`` prints it."""


def context_preview(app: App, storage: ProjectStorage, session_id: str, budget: int | None) -> ContextPreview:
    """The ``context`` verb's result for the session and the pieces it is made of, oldest first, each marked
    when it is in the fresh tail."""
    from ..operations.browse import segments
    from ..operations.context import ContextRequest, context

    segments(storage, session_id)  # exactly this session: a permalink never resolves a prefix
    default = int(app.config.get("compaction.context_budget_tokens"))
    found = context(app, ContextRequest(session_id, budget or default), storage=storage)
    assembled = found.assembled
    chosen = assembled.selection
    items = tuple(ContextItemView("summary" if p.summary_id else "message", p.summary_id or f"msg_{p.message_id}",
                                  p.tokens, n >= chosen.tail_from) for n, p in enumerate(chosen.pieces))
    return ContextPreview(
        project_id=storage.project_id, session_id=session_id, budget=assembled.budget, default_budget=default,
        token_estimate=assembled.token_estimate, fresh_tail_tokens=assembled.fresh_tail_tokens,
        over_budget=assembled.over_budget, items=items,
        messages=tuple(found.to_json()["messages"]),
    )


@dataclass(frozen=True, slots=True)
class SessionStart:
    project_id: str
    session_id: str
    restored: dict[str, Any]
    """What the SessionStart hook hands the agent for this session: summaries, messages, memories, the text."""


def session_start(app: App, storage: ProjectStorage, session_id: str) -> SessionStart:
    """``assembly.restore`` of the session with the project's memories, as the hook runs it (the
    surfacing of those memories is not recorded: nothing was shown to a model)."""
    from ..assembly.restore import SESSION_START_SUMMARIES, SESSION_START_TOKENS, restore
    from ..memory.hints import session_memories
    from ..memory.scope import MemoryScope
    from ..operations.browse import segments

    segments(storage, session_id)
    memories = session_memories(MemoryScope(storage, False), None, int(app.config.get("memory.restore_count")))
    return SessionStart(storage.project_id, session_id, restore(
        storage, session_id, max_tokens=SESSION_START_TOKENS, limit=SESSION_START_SUMMARIES, source="startup",
        memories=memories))


@dataclass(frozen=True, slots=True)
class SearchRow:
    """One id found by either list, with its rank in each (``None``: not in that list)."""

    id: str
    kind: str
    search_rank: int | None
    grep_rank: int | None
    snippet: str
    session_id: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class SearchPage:
    project_id: str
    query: str
    rows: tuple[SearchRow, ...]
    search: tuple[dict[str, Any], ...]
    """The results as ``lcm search --json`` / the ``lcm_search`` tool give them."""
    grep: dict[str, Any]
    """The hits as ``lcm grep --json`` gives them."""


def search_page(app: App, query: str) -> SearchPage:
    """The ``search`` and ``grep`` verbs on the project of ``app`` (one ``App`` per project root): every id
    either list holds, with its rank in each."""
    from ..operations.recall import GrepRequest, SearchRequest, grep, search
    from ..recall.results import iso

    project_id = app.project_ref().project_id
    if not query.strip():
        return SearchPage(project_id, query, (), (), {})
    ranked = search(app, SearchRequest(query, limit=SEARCH_LIMIT))
    found = grep(app, GrepRequest(query, mode="full_text", limit=GREP_LIMIT))
    grep_hits = [h for r in found.results for g in r.groups for h in g.hits] + [
        h for r in found.results for h in r.summary_hits]
    grep_rank = {h.id: n for n, h in enumerate(sorted(grep_hits, key=lambda h: (-h.score, h.id)), 1)}
    rows: dict[str, SearchRow] = {}
    for r in ranked.ranked:
        rows[r.hit.id] = SearchRow(r.hit.id, r.hit.kind, r.rank, grep_rank.get(r.hit.id), r.hit.snippet,
                                   r.hit.session_id, iso(r.hit.created_at))
    for h in grep_hits:
        if h.id not in rows:
            rows[h.id] = SearchRow(h.id, h.kind, None, grep_rank[h.id], h.snippet, h.session_id, iso(h.created_at))
    ordered = sorted(rows.values(), key=lambda r: (r.search_rank or 10**6, r.grep_rank or 10**6, r.id))
    return SearchPage(project_id, query, tuple(ordered), tuple(ranked.to_json()["results"]), found.to_json())


@dataclass(frozen=True, slots=True)
class MemoryView:
    id: str
    content: str
    tags: tuple[str, ...]
    confidence: float
    archived: bool
    created_at: str
    surfaced: int
    useful: int
    not_useful: int
    surfacings: tuple[dict[str, Any], ...]
    lineage: dict[str, Any]
    source_summary_id: str | None


@dataclass(frozen=True, slots=True)
class MemoriesPage:
    project_id: str
    memories: tuple[MemoryView, ...]
    stale: tuple[str, ...]
    """Ids ``lcm memory review`` names as stale (old, low confidence, never useful)."""
    page: int
    pages: int


def memories_page(app: App, storage: ProjectStorage, page: int) -> MemoriesPage:
    """The ``memory`` verb's ``list`` (archived ones too), ``stats`` and ``review`` on the project of ``app``,
    with each listed memory's last surfacings (read from ``storage``, the same project)."""
    from ..operations.memory import MemoryRequest, memory
    from ..recall.results import iso

    listed = memory(app, MemoryRequest("list", archived=True)).answer["memories"]
    counts = {m["id"]: m for m in memory(app, MemoryRequest("stats", archived=True)).answer["memories"]}
    stale = tuple(m["id"] for m in memory(app, MemoryRequest("review")).answer["candidates"])
    pages = max(1, -(-len(listed) // MEMORIES_PAGE))
    page = max(1, min(page, pages))
    views = []
    for row in listed[(page - 1) * MEMORIES_PAGE: page * MEMORIES_PAGE]:
        ref, count = row["id"], counts.get(row["id"], {})
        views.append(MemoryView(
            id=ref, content=row["content"], tags=tuple(row["tags"]), confidence=row["confidence"],
            archived=row["archived"], created_at=row["created_at"], surfaced=count.get("surfaced", 0),
            useful=count.get("useful", 0), not_useful=count.get("not_useful", 0),
            surfacings=tuple({"query": s.query, "surfaced_at": iso(s.surfaced_at)}
                             for s in storage.recall.surfacings(ref)[-5:]),
            lineage=row["lineage"], source_summary_id=row["source_summary_id"],
        ))
    return MemoriesPage(storage.project_id, tuple(views), stale, page, pages)


MEMORY_ACTIONS = ("archive", "revive", "forget", "useful", "not-useful")


def memory_action(app: App, action: str, memory_ref: str) -> dict[str, Any]:
    """One of ``MEMORY_ACTIONS`` on a project memory: the ``memory`` verb's archive, revive, forget or
    feedback."""
    from ..operations.memory import MemoryRequest, memory

    if action in ("useful", "not-useful"):
        return memory(app, MemoryRequest("feedback", id=memory_ref, useful=action == "useful")).to_json()
    return memory(app, MemoryRequest(action, id=memory_ref)).to_json()


def archive_stale(app: App) -> dict[str, Any]:
    from ..operations.memory import MemoryRequest, memory

    return memory(app, MemoryRequest("review", archive=True)).to_json()


@dataclass(frozen=True, slots=True)
class ProjectHealth:
    project_id: str
    root: str
    redactions: dict[str, int]
    """What the scrubber removed at ingest, per rule (counts only: the secrets were never stored)."""
    audit: dict[str, Any] | None
    """The last ``lcm sensitive audit`` of this project: when, with which rules, how many findings."""
    total_bytes: int | None
    free_bytes: int
    advice: str


@dataclass(frozen=True, slots=True)
class HealthPage:
    checks: tuple[dict[str, Any], ...]
    status: dict[str, Any]
    projects: tuple[ProjectHealth, ...]


def health_page(app: App, refs: Sequence[ProjectRef], storage_of: Callable[[str], ProjectStorage],
                usage_of: Callable[[str], StorageUsage]) -> HealthPage:
    """The ``doctor`` and ``status`` verbs for the explorer's ``LCM_HOME``, and per project what was redacted,
    the last audit and whether ``lcm vacuum`` would give space back."""
    from ..diagnostics import FREE_SPACE_MIN_BYTES, FREE_SPACE_SHARE
    from ..operations.health import DoctorRequest, StatusRequest, doctor, status
    from ..scrub.audit_marks import last_audit

    checks = tuple(doctor(app, DoctorRequest()).to_json()["checks"])
    projects = []
    for ref in refs:
        storage, usage = storage_of(ref.project_id), usage_of(ref.project_id)
        mark = last_audit(app.config.home, ref.project_id)
        wasteful = usage.free_bytes >= FREE_SPACE_MIN_BYTES and usage.free_bytes >= FREE_SPACE_SHARE * usage.total_bytes
        projects.append(ProjectHealth(
            ref.project_id, ref.root, dict(sorted(storage.redaction_admin.get_counts().items())),
            to_jsonable(mark) if mark else None, None if usage.shared else usage.total_bytes, usage.free_bytes,
            f"`lcm vacuum` would give about {usage.free_bytes // 2**20} MiB back" if wasteful
            else "no vacuum needed"))
    return HealthPage(checks, status(app, StatusRequest()).to_json(), tuple(projects))
