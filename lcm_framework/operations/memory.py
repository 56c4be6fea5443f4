"""Memory verbs: the ``lcm memory`` actions (add, list, show, search, archive, revive, review, forget, feedback,
stats) and the agent tools' store and feedback."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .base import Result

if TYPE_CHECKING:
    from ..app import App

SUMMARY_PREFIX = "sum_"


@dataclass(frozen=True, slots=True)
class MemoryRequest:
    """One ``lcm memory ACTION``; each action reads the fields it takes (``docs/memory.md``) and checks them."""

    action: str
    id: str | None = None
    text: str | None = None
    tags: list[str] | None = None
    confidence: float | None = None
    tag: str | None = None
    archived: bool | None = None
    query: str | None = None
    limit: int | None = None
    days: int | None = None
    max_confidence: float | None = None
    archive: bool | None = None
    useful: bool | None = None
    user_wide: bool | None = None
    """The user-wide scope (``--global``, ``gmem_`` ids) instead of this project's."""
    origin: str | None = None
    """Who stored it (``user`` unless said): kept in the memory's lineage."""

    @classmethod
    def from_fields(cls, action: str, given: Mapping[str, Any]) -> MemoryRequest:
        """The request for ``action`` from a mapping of field values (the daemon's body); an unknown field is
        a ``MemoryArgumentError``."""
        from ..memory.actions import MemoryArgumentError

        known = {f.name for f in fields(cls)} - {"action"}
        unknown = sorted(set(given) - known)
        if unknown:
            raise MemoryArgumentError(f"unknown argument {unknown[0]!r} (allowed: {', '.join(sorted(known))})")
        return cls(action, **given)

    def arguments(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "action" and getattr(self, f.name) is not None}


@dataclass(frozen=True, slots=True)
class MemoryDone(Result):
    """What the action answers (``memory.actions``): a memory's row, ``{"memories": [...]}``, ..."""

    request: MemoryRequest
    answer: dict[str, Any]

    @property
    def empty(self) -> bool:
        """A search (or list) that found nothing."""
        return self.request.action in ("list", "search") and not self.answer["memories"]

    def to_json(self) -> dict[str, Any]:
        return self.answer


def memory(app: App, request: MemoryRequest) -> MemoryDone:
    """Run one memory action in the scope the request names (only ``add`` creates a scope)."""
    from ..memory import actions

    return MemoryDone(request, actions.run(app, request.action, request.arguments()))


@dataclass(frozen=True, slots=True)
class StoreRequest:
    """``lcm_store``: an agent remembering an insight."""

    text: str
    tags: list[str] | None = None
    user_wide: bool = False


@dataclass(frozen=True, slots=True)
class Stored(Result):
    id: str
    created: bool
    confidence: float
    tags: list[str]


def store(app: App, request: StoreRequest) -> Stored:
    """The insight stored (or, already known, reinforced) with origin ``mcp``."""
    done = memory(app, MemoryRequest("add", text=request.text, tags=request.tags, user_wide=request.user_wide,
                                     origin="mcp")).answer
    return Stored(done["id"], done["created"], done["confidence"], done["tags"])


@dataclass(frozen=True, slots=True)
class FeedbackRequest:
    """``lcm_feedback``: whether a surfaced memory (``mem_``, ``gmem_``) or summary (``sum_``) helped."""

    id: str
    useful: bool


@dataclass(frozen=True, slots=True)
class FeedbackGiven(Result):
    id: str
    useful: bool
    confidence: float | None = None
    """The memory's confidence after the feedback (a summary has none)."""

    def to_json(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"id": self.id, "useful": self.useful}
        if self.confidence is not None:
            answer["confidence"] = self.confidence
        return answer


def feedback(app: App, request: FeedbackRequest) -> FeedbackGiven:
    """A memory's confidence moved, or a summary's feedback recorded (it ranks prompt-time recall)."""
    if request.id.startswith(SUMMARY_PREFIX):
        from ..memory.scope import memory_scope

        with memory_scope(app) as scope:
            scope.storage.recall.record_feedback(request.id, useful=request.useful)
        return FeedbackGiven(request.id, request.useful)
    done = memory(app, MemoryRequest("feedback", id=request.id, useful=request.useful)).answer
    return FeedbackGiven(done["id"], done["useful"], done["confidence"])
