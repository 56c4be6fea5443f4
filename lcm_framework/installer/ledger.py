"""What ``lcm install`` changed, kept under ``$LCM_HOME/backups``, so ``lcm uninstall`` restores the prior state.

For every file install first touched, the ledger records whether the file (and which of its directories)
LCM created, a backup of the original text, and a digest of what install wrote. Uninstall then:

* a file still exactly as install left it gets its original bytes back (a file LCM created is removed);
* a file changed since (the agent rewrote it) loses only LCM's entries, and a file LCM created is removed
  when nothing else is left in it (``{}`` or blank);
* the directories LCM created are removed when empty.

Every write backs up the text it replaces into the same directory; older backups are pruned (the newest
``KEEP`` per file, and every original the ledger still needs, are kept).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import LcmError
from .changes import FileChange, read_text, write_atomic

BACKUPS_DIR = "backups"
LEDGER_FILE = "install-ledger.json"
KEEP = 3
"""Backups kept per file besides the originals the ledger references."""
EMPTY_DOCUMENTS = ("", "{}")


def backups_dir(home: Path) -> Path:
    return home / BACKUPS_DIR


@dataclass(frozen=True, slots=True)
class Entry:
    created: bool
    """The file did not exist before LCM's first install."""
    created_dirs: tuple[str, ...]
    """Its directories that did not exist either, outermost first."""
    original: str | None
    """The backup (a file name in the backups directory) holding the text before LCM's first install."""
    installed_sha256: str
    """What install last wrote."""


class Ledger:
    """The install ledger of one ``$LCM_HOME`` (read on creation, written by ``save``)."""

    def __init__(self, home: Path) -> None:
        self.dir = backups_dir(home)
        self.path = self.dir / LEDGER_FILE
        self.entries = _load(self.path)
        self._emptied: set[str] = set()
        """Directories LCM created whose last file LCM created is gone: removed by ``save`` when empty."""

    def plan(self, change: FileChange, *, install: bool) -> FileChange:
        """``change`` as it should be applied: an uninstall restores what the ledger knows of the file."""
        entry = self.entries.get(str(change.path))
        if install or entry is None:
            return change
        if change.before is not None and _sha(change.before) == entry.installed_sha256:
            original = None if entry.original is None else read_text(self.dir / entry.original)
            if entry.created or original is not None:
                return replace(change, after=original)
        if entry.created and change.after is not None and change.after.strip() in EMPTY_DOCUMENTS:
            return replace(change, after=None)
        return change

    def apply(self, change: FileChange, *, install: bool) -> Path | None:
        """Write ``change`` (a planned one), record it, and return the backup of the text it replaced."""
        key = str(change.path)
        missing_dirs = _missing_dirs(change.path.parent)
        backup = self._backup(change) if change.changed else None
        change.apply()
        entry = self.entries.get(key)
        if install and change.after is not None:
            if entry is None:
                entry = Entry(change.before is None, tuple(str(d) for d in missing_dirs),
                              backup.name if backup else None, _sha(change.after))
            self.entries[key] = replace(entry, installed_sha256=_sha(change.after))
        elif not install and entry is not None:
            del self.entries[key]
            if change.after is None:
                self._emptied.update(entry.created_dirs)
        self._prune(change.path)
        return backup

    def save(self) -> None:
        """Remove the emptied directories LCM created, and write the ledger (removed with no entry left)."""
        for directory in sorted(self._emptied, key=len, reverse=True):  # the innermost first
            with contextlib.suppress(OSError):  # not empty: something else lives there now
                os.rmdir(directory)
        self._emptied.clear()
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        data = {path: {"created": e.created, "created_dirs": list(e.created_dirs), "original": e.original,
                       "installed_sha256": e.installed_sha256} for path, e in sorted(self.entries.items())}
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps({"files": data}, indent=2) + "\n")

    def _backup(self, change: FileChange) -> Path | None:
        if change.before is None:
            return None
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        stem = f"{_prefix(change.path)}{time.strftime('%Y%m%dT%H%M%S')}"
        backup, n = self.dir / stem, 1
        while backup.exists():
            backup, n = self.dir / f"{stem}-{n}", n + 1
        write_atomic(backup, change.before)
        return backup

    def _prune(self, path: Path) -> None:
        """Drop all but the newest ``KEEP`` backups of ``path``, never an original the ledger references."""
        if not self.dir.is_dir():
            return
        needed = {e.original for e in self.entries.values() if e.original}
        prefix = _prefix(path)
        found = sorted((p for p in self.dir.iterdir() if p.name.startswith(prefix)), key=lambda p: p.name)
        for old in [p for p in found if p.name not in needed][:-KEEP]:
            old.unlink(missing_ok=True)


def _prefix(path: Path) -> str:
    """The name every backup of ``path`` starts with: its name and a digest of its full path."""
    return f"{path.name}.{hashlib.sha256(str(path).encode()).hexdigest()[:12]}."


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _missing_dirs(directory: Path) -> list[Path]:
    """``directory`` and its ancestors that do not exist, outermost first."""
    missing = []
    while not directory.exists() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    return missing[::-1]


def _load(path: Path) -> dict[str, Entry]:
    text = read_text(path)
    if text is None:
        return {}
    try:
        files: dict[str, Any] = json.loads(text)["files"]
        return {p: Entry(bool(e["created"]), tuple(e["created_dirs"]), e["original"], str(e["installed_sha256"]))
                for p, e in files.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise LcmError(f"{path} is not an install ledger LCM wrote; move it aside to install or uninstall "
                       "without it") from None
