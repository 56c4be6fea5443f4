"""A computed file change: diff it, or apply it with an atomic write."""

from __future__ import annotations

import difflib
import os
import tempfile
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

    def apply(self) -> None:
        """Write the change atomically: the file keeps its mode (a new one is 0600, its directories 0700) and,
        when it is a symbolic link, stays one (its target is written); ``after`` None deletes it. Backups are the
        install ledger's (``installer.ledger``)."""
        if not self.changed:
            return
        if self.after is None:
            self.path.unlink(missing_ok=True)
            return
        # A settings file kept as a link into the user's dotfiles stays a link: the change goes to its target.
        target = self.path.resolve() if self.path.is_symlink() else self.path
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomic(target, self.after, mode)


def read_text(path: Path) -> str | None:
    """The text of ``path``, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def write_atomic(path: Path, text: str, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` through a temporary file and an atomic rename, with ``mode``. The temporary
    file gets an unpredictable name and is created exclusively (``mkstemp``): a link planted beside the agent's
    file is never followed."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".lcm-tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
