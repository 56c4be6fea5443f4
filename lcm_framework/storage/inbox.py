"""Records of the passive-event inbox: what machines deliver to a shared backend and how it is applied.

A machine's drain worker delivers its local outbox events (``InboxEvent``) in its own sequence order; the
backend keeps one row per event (``InboxRow``) through ``pending -> claimed -> retry -> applied |
quarantined``. A claim (``InboxClaim``) carries the token that fences the final applied transition, and
the effect of applying an event (``PassiveEffect``) is written in the same transaction as that transition.
See ``docs/postgresql.md`` ("Several machines").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, cast

from ..errors import UnsupportedCapabilityError

if TYPE_CHECKING:
    from .contracts import PassiveInboxRepository

DRAIN_LEASE_PREFIX = "passive-drain:"
"""The drain lease of a machine is named ``DRAIN_LEASE_PREFIX + machine_id``."""


class InboxState(str, Enum):
    PENDING = "pending"
    CLAIMED = "claimed"
    RETRY = "retry"
    APPLIED = "applied"
    QUARANTINED = "quarantined"


OPEN_STATES = frozenset({InboxState.PENDING, InboxState.CLAIMED, InboxState.RETRY})


class PruneOutcome(str, Enum):
    """``pruned``: the exact applied row was deleted; ``missing``: no such row (already pruned);
    ``refused``: a row is there but not the exact applied one (never counted as pruned)."""

    PRUNED = "pruned"
    MISSING = "missing"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class InboxEvent:
    """One event as its machine delivers it. ``prev_seq`` is the machine's previously delivered sequence
    (``None`` for its first): the backend accepts an event only right after its predecessor (gap-safe)."""

    event_uuid: str
    version: int
    machine_id: str
    seq: int
    prev_seq: int | None
    event: str
    payload: str
    digest: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class InboxRow:
    """The stored row of a delivered event (immutable fields as delivered, then its delivery state)."""

    event_uuid: str
    version: int
    machine_id: str
    seq: int
    event: str
    payload: str
    digest: str
    created_at: datetime
    inserted_at: datetime
    state: InboxState
    attempts: int
    last_error: str | None
    claim_token: str | None
    applied_at: datetime | None
    quarantined_at: datetime | None

    def same_event(self, event: InboxEvent) -> bool:
        """Whether this row holds exactly ``event`` (the immutable readback check)."""
        return (self.event_uuid, self.version, self.machine_id, self.seq, self.event, self.payload,
                self.digest) == (event.event_uuid, event.version, event.machine_id, event.seq, event.event,
                                 event.payload, event.digest)


@dataclass(frozen=True, slots=True)
class InboxClaim:
    """A claimed event: ``token`` fences its applied (or failed) transition; ``attempts`` counts earlier
    failed applications."""

    event_uuid: str
    machine_id: str
    seq: int
    version: int
    event: str
    payload: str
    attempts: int
    token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class PassiveEffect:
    """What applying one event records in the project's passive-event log. ``files`` are relative to the
    project root, so the same file on two machines is one path; ``co_edit``: they were edited (successfully)
    and count toward ``PassiveInboxRepository.co_edits``."""

    session_id: str | None
    tool_name: str | None = None
    status: str | None = None
    files: Sequence[str] = ()
    detail: str | None = None
    co_edit: bool = False


@dataclass(frozen=True, slots=True)
class InboxBacklog:
    """This project's inbox: rows per state, per machine and state, the oldest open row's insertion time, the
    newest error, the database clock the ages are measured against, and how many events its log holds."""

    by_state: Mapping[str, int]
    by_machine: Mapping[str, Mapping[str, int]]
    oldest_open_at: datetime | None
    last_error: str | None
    now: datetime
    log_rows: int = 0


def unsupported_passive_inbox(backend: str, project_id: str) -> PassiveInboxRepository:
    """The ``passive_inbox`` of a backend without one (``Capabilities.passive_inbox`` false)."""
    return cast("PassiveInboxRepository", _Unsupported(backend, project_id))


class _Unsupported:
    """Every method raises UnsupportedCapabilityError."""

    def __init__(self, backend: str, project_id: str) -> None:
        self._backend = backend
        self._project = project_id

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def unsupported(*_args: Any, **_kwargs: Any) -> Any:
            raise UnsupportedCapabilityError(
                f"the {self._backend} backend has no passive-event inbox (team sync needs storage.backend = "
                "postgresql)", backend=self._backend, domain="passive_inbox", project=self._project,
                code="no_passive_inbox")

        return unsupported
