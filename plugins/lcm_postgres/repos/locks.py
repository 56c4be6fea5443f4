"""Transaction advisory locks: per conversation, per (project, session) and per parent session."""

from __future__ import annotations

import hashlib
from typing import Any


def advisory_key(*parts: str) -> int:
    """A signed 64-bit advisory-lock key for a tuple of identity strings."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def lock_conversation(cur: Any, project_id: str, conversation_id: int) -> None:
    """Per-conversation mutual exclusion until the end of the transaction (needs no table privilege)."""
    cur.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key("conversation", project_id, str(conversation_id)),))
