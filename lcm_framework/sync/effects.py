"""What applying one delivered event does: its log entry, and the team-level learning it triggers.

``effect_of`` reads a delivered payload strictly: an unsupported transport version or a payload of the
wrong shape is a DataValidationError, which the worker counts as a failed application (retried, then
quarantined). ``team_learning`` runs in the same fenced transaction as the applied transition: a pair of
files edited together in ``CO_EDIT_SESSIONS`` sessions (on any machine) becomes one memory candidate
(``learning.remember_co_edit``).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..errors import DataValidationError
from ..outbox import TRANSPORT_VERSION
from ..storage.contracts import Repositories
from ..storage.inbox import InboxClaim, PassiveEffect
from .learning import CO_EDIT_SESSIONS, EDIT_TOOLS, remember_co_edit


def _invalid(message: str, code: str) -> DataValidationError:
    return DataValidationError(message, backend="sync", domain="passive_events", code=code)


def effect_of(claim: InboxClaim) -> PassiveEffect:
    """The log entry of a claimed event; DataValidationError when its payload cannot be applied."""
    if claim.version != TRANSPORT_VERSION:
        raise _invalid(f"transport version {claim.version} is not supported here", "unsupported_version")
    try:
        body = json.loads(claim.payload)
    except ValueError:
        raise _invalid("the payload is not JSON", "payload_not_json") from None
    if not isinstance(body, dict) or body.get("event") != claim.event:
        raise _invalid("the payload does not describe its event", "payload_mismatch")
    session = _text(body, "session_id")
    tool = body.get("tool")
    if tool is None:
        return PassiveEffect(session_id=session)
    if not isinstance(tool, dict):
        raise _invalid("the payload's tool facts are not an object", "payload_shape")
    files = tool.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise _invalid("the payload's files are not a list of paths", "payload_shape")
    detail = _text(tool, "error") or _text(tool, "command")
    name, status = _text(tool, "tool"), _text(tool, "status")
    return PassiveEffect(session_id=session, tool_name=name, status=status, files=tuple(files), detail=detail,
                         co_edit=(name in EDIT_TOOLS or tool.get("kind") == "edit") and status == "ok")


def _text(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid(f"the payload's {key} is not text", "payload_shape")
    return value


def team_learning(repos: Repositories, claim: InboxClaim, effect: PassiveEffect) -> list[int]:
    """Memory candidates this applied edit completes (ids): each file pair once, when it reaches
    ``CO_EDIT_SESSIONS`` sessions. Call after ``complete`` in the same transaction."""
    if not effect.co_edit or not effect.files or effect.session_id is None:
        return []
    created: list[int] = []
    seen: set[tuple[str, str]] = set()
    for path in effect.files:
        for other, sessions in repos.passive_inbox.co_edits(path).items():
            pair = (min(path, other), max(path, other))
            if sessions < CO_EDIT_SESSIONS or pair in seen:
                continue
            seen.add(pair)
            found = remember_co_edit(repos.promoted_memory, pair, sessions, [claim.event_uuid], team=True)
            if found is not None:
                created.append(found)
    return created


class SeenEdits:
    """Per project root and session, the files a worker's committed applications left in the session's
    co-edit record (``complete`` counts a pair when a session first has both files). An edit within them
    changes no count, so ``team_learning`` can find nothing new for it and is skipped (a long backlog of
    one session's edits then costs no co-edit reads); a count that grows is examined by the worker whose
    application grew it. Remembers the ``limit`` most recent sessions."""

    def __init__(self, limit: int = 4096) -> None:
        self._limit = limit
        self._files: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()

    def may_complete(self, root: str, effect: PassiveEffect) -> bool:
        """Whether applying ``effect`` may have raised a co-edit count."""
        if not effect.co_edit or effect.session_id is None or not effect.files:
            return False
        return not set(effect.files) <= self._files.get((root, effect.session_id), frozenset())

    def committed(self, root: str, effects: Sequence[PassiveEffect]) -> None:
        """These effects are committed: their files are in their sessions' records."""
        for effect in effects:
            if effect.co_edit and effect.session_id is not None and effect.files:
                key = (root, effect.session_id)
                self._files[key] = self._files.get(key, frozenset()) | frozenset(effect.files)
                self._files.move_to_end(key)
        while len(self._files) > self._limit:
            self._files.popitem(last=False)
