"""A computed file change: diff it, or apply it with a timestamped backup and an atomic write."""

from __future__ import annotations

import difflib
import os
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class FileChange:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: delete the file
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        label = str(self.path)
        lines = difflib.unified_diff(old, new, fromfile=f"{label} (current)" if self.before is not None
                                     else "/dev/null", tofile=f"{label} (after)" if self.after is not None
                                     else "/dev/null")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)

    def apply(self) -> Path | None:
        """Write the change; returns the backup path (None when there was nothing to back up)."""
        if not self.changed:
            return None
        backup = None
        if self.before is not None:
            stamp = time.strftime("%Y%m%dT%H%M%S")
            backup = self.path.with_name(f"{self.path.name}.lcm-backup-{stamp}")
            n = 1
            while backup.exists():
                backup = self.path.with_name(f"{self.path.name}.lcm-backup-{stamp}-{n}")
                n += 1
            mode = self.path.stat().st_mode & 0o777
            _write(backup, self.before, mode)
        if self.after is None:
            self.path.unlink(missing_ok=True)
            return backup
        mode = self.path.stat().st_mode & 0o777 if self.path.exists() else 0o600
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _write(self.path, self.after, mode)
        return backup


def read_text(path: Path) -> str | None:
    """The text of ``path``, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.lcm-tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, mode)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, mode)
    os.replace(tmp, path)
