"""``lcm grep --include-meta``: find the native records kept out of the conversation on purpose.

Agent scaffolding, client metadata, the agents' own compaction summaries and
LCM's restored context are stored only as native records (never messages; see
``MappedRecord.kind``). Their kind is not stored: each native-only record of
the searched conversations is mapped again by its format (mapping is pure), and
the records with a kind are matched on the text of their string values.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..storage.models import SearchMode
from .refs import SessionNotFoundError
from .scope import project_scopes, resolve_session

if TYPE_CHECKING:
    from ..app import App
    from ..storage.contracts import ProjectStorage
    from ..transcripts.contracts import TranscriptFormat

SNIPPET_CHARS = 160


@dataclass(frozen=True, slots=True)
class MetaHit:
    id: str  # native_<transcript id>
    kind: str
    project_id: str
    session_id: str
    created_at: datetime
    snippet: str


def grep_meta_all(app: App, pattern: str, *, all_projects: bool, session: str | None, mode: SearchMode,
                  since: datetime | None, limit: int | None) -> list[MetaHit]:
    """Matching kinded native records of the project (or every project), oldest first, at most ``limit``."""
    matches = _matcher(pattern, mode)
    formats = {f.identity.identifier: f for f in app.plugins.formats().values()}
    hits: list[MetaHit] = []
    with project_scopes(app, all_projects) as scopes:
        for storage in scopes:
            try:
                sessions = _sessions(storage, session)
            except SessionNotFoundError:
                if not all_projects:
                    raise
                continue
            for session_id in sessions:
                for hit in _session_hits(storage, session_id, formats, matches):
                    if since is None or hit.created_at >= since:
                        hits.append(hit)
    hits.sort(key=lambda h: (h.created_at, h.id))
    return hits[:limit] if limit is not None else hits


def _sessions(storage: ProjectStorage, session: str | None) -> list[str]:
    if session:
        return sorted({c.session_id for c in resolve_session(storage, session)})
    return sorted({c.session_id for c in storage.conversations.list_conversations()})


def _session_hits(storage: ProjectStorage, session_id: str, formats: dict[str, TranscriptFormat],
                  matches: Any) -> Iterator[MetaHit]:
    for record in storage.native_transcripts.list_by_native_session(session_id):
        fmt = formats.get(record.format.identifier)
        if record.message_id is not None or fmt is None:
            continue
        value = json.loads(record.payload_json)
        kind = fmt.map_record(value).kind
        if kind is None:
            continue
        text = "\n".join(_strings(value))
        at = matches(text)
        if at is None:
            continue
        start = max(0, at - SNIPPET_CHARS // 4)
        yield MetaHit(f"native_{record.transcript_id}", kind, storage.project_id, session_id, record.observed_at,
                      " ".join(text[start:start + SNIPPET_CHARS].split()))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _matcher(pattern: str, mode: SearchMode) -> Any:
    """``text -> offset of the match or None`` for the grep modes (regex: RE2, as the storage backends)."""
    if mode is SearchMode.REGEX:
        import re2

        options = re2.Options()
        options.log_errors = False  # never RE2's log of an invalid pattern on stderr
        compiled = re2.compile(pattern, options)

        def regex(text: str) -> int | None:
            found = compiled.search(text)
            return found.start() if found else None
        return regex
    if mode is SearchMode.SUBSTRING:  # the exact text, case-sensitive, as the storage backends match it
        return lambda text: (lambda i: None if i < 0 else i)(text.find(pattern))
    words = pattern.casefold().split()

    def full_text(text: str) -> int | None:
        folded = text.casefold()
        offsets = [folded.find(w) for w in words]
        return None if not words or min(offsets) < 0 else min(offsets)
    return full_text
