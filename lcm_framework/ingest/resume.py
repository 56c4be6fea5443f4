"""Where an import of a source starts: fresh, after its checkpoint, or replaying the verified prefix."""

from __future__ import annotations

from dataclasses import dataclass

from ..storage.models import Checkpoint, FormatIdentity
from .prefix import PrefixHash
from .state import Counters, ReplayCache, resumable_counters


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """``counters`` to continue from (``None``: nothing new to read) and where reading starts.

    ``replay_until >= 0``: read from 0 and replay records ending at or before it; ``-1``: no replay (fresh,
    rescan, or cached counters). ``saved`` holds the checkpoint's counters when resuming after it.
    """

    counters: Counters | None
    start: int
    first_ordinal: int
    replay_until: int
    saved: Counters | None = None

    @property
    def resumed(self) -> bool:
        return self.saved is not None



def resume_point(cp: Checkpoint | None, prefix: PrefixHash, *, force_rescan: bool, session_id: str,
                 fmt: FormatIdentity, scrubber_version: str, cache: ReplayCache, project_id: str) -> ResumePoint:
    """Resume only when the checkpoint's session, format, scrubber and prefix digest all match the source;
    ``prefix`` is left hashed up to the checkpoint then (reset otherwise)."""
    if cp is None or force_rescan:
        return _fresh()
    saved = resumable_counters(cp, session_id=session_id, fmt=fmt, scrubber_version=scrubber_version)
    src = prefix.src
    if saved is None or cp.byte_offset > src.size:
        return _fresh()
    prefix.extend(cp.byte_offset)
    if prefix.hexdigest() != cp.prefix_sha256:
        prefix.reset()
        return _fresh()
    offset = cp.byte_offset
    if saved.open_tail:
        nxt = src.read_at(offset, 1)
        if nxt not in (b"", b"\n"):
            prefix.reset()
            return _fresh()  # the unterminated last line grew: the prefix record changed
        offset += len(nxt)
    if offset >= src.size:
        return ResumePoint(None, offset, 0, -1)
    cached = cache.get(project_id, cp)
    if cached is not None and (cached.next_seq, cached.next_ordinal, cached.runs) == (
            saved.next_seq, saved.next_ordinal, saved.runs):
        return ResumePoint(cached, offset, saved.next_ordinal, -1, saved)
    return ResumePoint(Counters(), 0, 0, offset, saved)


def _fresh() -> ResumePoint:
    return ResumePoint(Counters(), 0, 0, -1)
