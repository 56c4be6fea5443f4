"""What a live process holds open, read from ``/proc/<pid>/fd`` (Linux)."""

from __future__ import annotations

import os
from pathlib import Path

DATABASE_SUFFIXES = (".db", ".db-wal", ".db-shm", ".db-journal")


def deleted_database_files(pid: int) -> list[str]:
    """Database, WAL, SHM and journal files the process holds that were unlinked under it."""
    held: list[str] = []
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return held  # the process is gone
    for entry in entries:
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.endswith(" (deleted)") and target[: -len(" (deleted)")].endswith(DATABASE_SUFFIXES):
            held.append(target)
    return held
