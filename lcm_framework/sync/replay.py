"""``lcm sync replay ID``: give a quarantined event another chance, applied exactly once.

An event quarantined **in the inbox** (delivered, but its application failed ``sync.max_attempts`` times)
goes back to ``pending`` there exactly as delivered (same uuid, sequence, payload, digest; attempts reset),
and this machine's outbox waits for its acknowledgement again. An event quarantined **here** (its transport
form could not be prepared, so it was never delivered) goes back to ``pending`` in the outbox at the end of
the machine's sequence (``Outbox.requeue_quarantined``): the next drain delivers it after everything
delivered meanwhile, so per-machine order holds. One that names no project can never be delivered and is
refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..outbox import Outbox, OutboxEvent, outbox_path

if TYPE_CHECKING:
    from .worker import ProjectAccess


@dataclass(frozen=True, slots=True)
class Replayed:
    """Where the event waits now: ``inbox`` (pending in ``root``'s inbox) or ``outbox`` (pending delivery
    here, as sequence ``seq``)."""

    event_uuid: str
    where: str
    root: str
    state: str
    seq: int


def replay(home: Path, projects: ProjectAccess, roots: Sequence[str], event_uuid: str) -> Replayed:
    """Replay ``event_uuid`` (lower-case, validated) from this machine's outbox or the inbox of one of
    ``roots``; ConfigError when nothing replayable holds it, ConflictError when the inbox row is not
    quarantined."""
    path = outbox_path(home)
    local = _quarantined_here(path, event_uuid)
    if local is not None and local.delivered_at is None:
        root = local.payload.get("project")
        if not isinstance(root, str) or not Path(root).is_absolute():
            raise ConfigError("this event names no project, so it can never be delivered; it stays quarantined")
        with Outbox(path) as box:
            moved = box.requeue_quarantined(event_uuid)
        if moved is None:
            raise ConfigError("this event is no longer quarantined here (another command replayed it)")
        return Replayed(event_uuid, "outbox", root, moved.delivery, moved.seq)
    given = local.payload.get("project") if local is not None else None
    for root in [given] if isinstance(given, str) else roots:
        storage = projects.existing(root)
        if storage is None or not storage.passive_inbox.get([event_uuid]):
            continue
        row = storage.passive_inbox.replay(event_uuid)
        if path.exists():
            with Outbox(path) as box:
                box.reopen_delivered(event_uuid)
        return Replayed(row.event_uuid, "inbox", root, row.state.value, row.seq)
    raise ConfigError("no inbox of the projects known here holds this event (use --project ROOT)")


def _quarantined_here(path: Path, event_uuid: str) -> OutboxEvent | None:
    if not path.exists():
        return None
    with Outbox(path) as box:
        found = [e for e in box.quarantined() if e.uuid == event_uuid]
    return found[0] if found else None
