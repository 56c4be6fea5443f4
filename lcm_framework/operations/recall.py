"""Recall verbs: grep, search, describe, expand. The requests carry the ``lcm_grep``/``lcm_search``/
``lcm_describe``/``lcm_expand`` arguments (``recall_arguments``); every door builds one and renders the result."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..recall.refs import InvalidArgumentError
from ..storage.models import SearchMode
from .base import Result

if TYPE_CHECKING:
    from ..app import App
    from ..recall import Description, Expansion, GrepResult, Ranked
    from ..recall.meta import MetaHit

MAX_SNIPPET = 400
"""The longest grep snippet any door gives (the backends' own are shorter)."""


@dataclass(frozen=True, slots=True)
class GrepRequest:
    pattern: str
    mode: str = "substring"
    scope: str = "both"
    session: str | None = None
    since: str | None = None
    limit: int = 20
    include_subagents: bool = True
    all_projects: bool = False
    include_meta: bool = False
    """Also the records kept out of the conversation (``lcm grep --include-meta``)."""


@dataclass(frozen=True, slots=True)
class GrepFound(Result):
    """One ``GrepResult`` per searched project (the current one always has one), and the meta hits asked for."""

    request: GrepRequest
    results: tuple[GrepResult, ...]
    meta_hits: tuple[MetaHit, ...] | None = None

    @property
    def found(self) -> bool:
        return any(r.total for r in self.results) or bool(self.meta_hits)

    def to_json(self) -> Any:
        """The current project's result, or (``all_projects``) the list of those with a hit; with
        ``include_meta`` the hits kept out of the conversation under ``meta_hits``."""
        from ..jsonable import to_jsonable

        value: Any = [r for r in self.results if r.total] if self.request.all_projects else self.results[0]
        if self.meta_hits is not None:
            value = ({"results": value, "meta_hits": self.meta_hits} if self.request.all_projects
                     else {**to_jsonable(value), "meta_hits": self.meta_hits})
        return to_jsonable(value)


def grep(app: App, request: GrepRequest) -> GrepFound:
    """Lexical matches (``recall.grep_all``), message hits grouped under their covering summary. A regex the
    backend (or RE2) refuses is an ``InvalidArgumentError``; an unknown session ``SessionNotFoundError``."""
    from ..recall import Scope, grep_all, parse_since
    from ..recall.meta import grep_meta_all

    since, mode, every = parse_since(request.since), SearchMode(request.mode), request.all_projects
    with _refused_pattern(request.pattern, mode):
        results = grep_all(app, request.pattern, all_projects=every, session=request.session or None, mode=mode,
                           scope=Scope(request.scope), since=since, limit=request.limit,
                           include_subagents=request.include_subagents)
        meta = (tuple(grep_meta_all(app, request.pattern, all_projects=every, session=request.session or None,
                                    mode=mode, since=since, limit=request.limit))
                if request.include_meta else None)
    return GrepFound(request, tuple(_clipped(r) for r in results), meta)


def _clipped(result: GrepResult) -> GrepResult:
    for group in result.groups:
        group.hits[:] = [_clip(h) for h in group.hits]
    result.summary_hits[:] = [_clip(h) for h in result.summary_hits]
    return result


def _clip(hit: Any) -> Any:
    return hit if len(hit.snippet) <= MAX_SNIPPET else replace(hit, snippet=hit.snippet[: MAX_SNIPPET - 1] + "…")


class InvalidRegexError(InvalidArgumentError):
    """A ``regex`` pattern the backend (or RE2, for the meta records) refuses: a usage error (exit status 2,
    HTTP 400), ``invalid_regex`` as the backends name it."""

    code = "invalid_regex"


@contextlib.contextmanager
def _refused_pattern(pattern: str, mode: SearchMode) -> Iterator[None]:
    if mode is not SearchMode.REGEX:
        yield
        return
    import re2

    from ..errors import DataValidationError

    try:
        yield
    except (DataValidationError, re2.error) as exc:
        where = f"the {exc.backend} backend" if isinstance(exc, DataValidationError) else "RE2"
        raise InvalidRegexError(f"--mode regex: {where} refuses the pattern {pattern!r} "
                                "(not a valid regular expression)") from None


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int = 10
    context: int = 1
    include_subagents: bool = True
    all_projects: bool = False


@dataclass(frozen=True, slots=True)
class SearchFound(Result):
    """The ranked list over every searched project (rank 1 first) and the root of each project holding one."""

    request: SearchRequest
    ranked: tuple[Ranked, ...]
    roots: Mapping[str, str | None]

    def to_json(self) -> dict[str, Any]:
        """``{"query", "projects": [{"project_id", "root"}], "results": [...]}`` (``docs/recall.md``)."""
        from ..recall.results import search_document

        return search_document(self.request.query, self.ranked, self.roots, all_projects=self.request.all_projects)


def search(app: App, request: SearchRequest) -> SearchFound:
    """Ranked recall over messages, summaries and memories (``recall.search_all``)."""
    from ..recall import search_all
    from ..recall.results import project_roots

    ranked = search_all(app, request.query, all_projects=request.all_projects, limit=request.limit,
                        include_subagents=request.include_subagents, context=request.context)
    return SearchFound(request, tuple(ranked), project_roots(app, list(dict.fromkeys(r.project_id for r in ranked))))


@dataclass(frozen=True, slots=True)
class DescribeRequest:
    id: str
    max_chars: int | None = None
    """Cut each content after this many characters (None: in full, as ``lcm describe`` prints it)."""
    all_projects: bool = False


@dataclass(frozen=True, slots=True)
class Described(Result):
    request: DescribeRequest
    found: tuple[Description, ...]

    def to_json(self) -> Any:
        """The description (or, ``all_projects``, the list of one per project holding the id), each with its
        content cut to ``max_chars`` and ``content_truncated`` saying whether it was."""
        from ..jsonable import to_jsonable

        rows = []
        for item in self.found:
            row = to_jsonable(item)
            cut = self.request.max_chars
            row["content_truncated"] = cut is not None and len(item.content) > cut
            row["content"] = item.content if cut is None else item.content[:cut]
            rows.append(row)
        return rows if self.request.all_projects else rows[0]


def describe(app: App, request: DescribeRequest) -> Described:
    """A summary, message, large file or memory in full (``recall.describe``); an id no searched project holds
    is a ``RecallNotFoundError``."""
    from ..recall import describe as describe_one
    from ..recall import find_all, parse_ref

    found = find_all(app, parse_ref(request.id), lambda storage, ref: describe_one(storage, ref, app.config.home),
                     all_projects=request.all_projects)
    return Described(request, tuple(found))


@dataclass(frozen=True, slots=True)
class ExpandRequest:
    id: str
    depth: int = 1
    include_messages: bool = False
    token_cap: int | None = None
    """Stop before passing this many tokens (None: ``compaction.max_expand_tokens``)."""
    all_projects: bool = False


@dataclass(frozen=True, slots=True)
class Expanded(Result):
    request: ExpandRequest
    found: tuple[Expansion, ...]

    def to_json(self) -> Any:
        """The expansion (or, ``all_projects``, the list of one per project holding the id)."""
        from ..jsonable import to_jsonable

        return to_jsonable(list(self.found) if self.request.all_projects else self.found[0])


def expand(app: App, request: ExpandRequest) -> Expanded:
    """A summary (or a message that started sub-agent runs) expanded level by level (``recall.expand``)."""
    from ..recall import expand as expand_one
    from ..recall import find_all, parse_ref

    cap = request.token_cap or int(app.config.get("compaction.max_expand_tokens"))
    found = find_all(app, parse_ref(request.id), lambda storage, ref: expand_one(
        storage, ref, depth=request.depth, include_messages=request.include_messages, token_cap=cap,
    ), all_projects=request.all_projects)
    return Expanded(request, tuple(found))
