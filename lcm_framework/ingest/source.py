"""A transcript source bound to one opened file descriptor.

The locator is client-root-relative (posix, no ``..``); the resolved parent
must stay inside the resolved client root; the leaf is opened with
``O_NOFOLLOW`` and the descriptor must still identify the path. Every read
(prefix verification, replay, import) uses ``os.pread`` on that descriptor and
stops at the size seen when it was opened, so an atomic path replacement
cannot switch the bytes underneath a run. ``check()`` is the change fence run
before prefix validation, before every batch and after every commit.

The bytes a stream reads are kept (``_Kept``, at most ``KEEP_BYTES``) until
``digest_range`` hashes them: the prefix digest of a checkpoint is computed
from the very bytes that were parsed, and the file is read once.
"""

from __future__ import annotations

import io
import os
import stat
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Protocol

from .errors import SourceChangedError, SourceRefusedError

CHUNK = 1 << 20
KEEP_BYTES = 64 << 20
"""Read bytes kept for the prefix hash at most; past that (a huge line) the hash reads them again."""


class Digest(Protocol):
    """The part of a ``hashlib`` hash object that sources and ingest keys use."""

    def update(self, data: bytes | memoryview, /) -> None: ...
    def copy(self) -> Digest: ...
    def hexdigest(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SourceIdentity:
    """What identifies the bytes of an open file: a change in any field is a changed source."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    mode: int
    uid: int

    @classmethod
    def of(cls, st: os.stat_result) -> SourceIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode, st.st_uid)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def check_locator(locator: str) -> str:
    """A client-root-relative posix locator; absolute, drive, UNC, backslash and ``..`` forms are refused."""
    pure = PurePosixPath(locator)
    if (
        not locator
        or "\\" in locator
        or "\x00" in locator
        or pure.is_absolute()
        or (len(locator) > 1 and locator[1] == ":")
        or any(part in ("..", "") for part in locator.split("/"))
    ):
        raise SourceRefusedError("not a client-root-relative locator", code="bad_locator")
    return pure.as_posix()


def relative_locator(root: Path, path: Path) -> str:
    """The locator of ``path`` under ``root`` after resolving the parent (never the leaf)."""
    real_root = root.resolve()
    parent = path.parent.resolve()
    try:
        rel_parent = parent.relative_to(real_root)
    except ValueError:
        raise SourceRefusedError("resolves outside its client root", code="outside_root") from None
    return check_locator((PurePosixPath(rel_parent.as_posix()) / path.name).as_posix())


class BoundSource:
    """One opened transcript file; close it (or use ``with``) when done."""

    def __init__(self, root: Path, locator: str) -> None:
        self.root = root.resolve()
        self.locator = check_locator(locator)
        self.path = self.root / self.locator
        if not self.path.parent.resolve().is_relative_to(self.root):
            raise SourceRefusedError("resolves outside its client root", locator=self.locator,
                                     code="outside_root")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self.fd = os.open(self.path, flags)
        except OSError as exc:
            code = "symlink_leaf" if os.path.islink(self.path) else "unreadable"
            raise SourceRefusedError(
                f"cannot open ({code.replace('_', ' ')}: {exc.strerror})", locator=self.locator, code=code
            ) from None
        self._kept = _Kept(0)
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISREG(st.st_mode):
                raise SourceRefusedError("not a regular file", locator=self.locator, code="not_regular")
            self.identity = SourceIdentity.of(st)
            linked = os.lstat(self.path)
            if (linked.st_dev, linked.st_ino) != (st.st_dev, st.st_ino):
                raise SourceChangedError("path was replaced while opening", locator=self.locator)
        except BaseException:
            os.close(self.fd)
            raise

    @property
    def size(self) -> int:
        return self.identity.size

    def check(self) -> None:
        """Fail with SourceChangedError unless the descriptor still shows the bound snapshot.

        A ctime-only change is tolerated when the path now names another inode
        (an atomic replacement: our descriptor still reads the bound bytes).
        """
        now = SourceIdentity.of(os.fstat(self.fd))
        if now == self.identity:
            return
        if now == _with_ctime(self.identity, now.ctime_ns):
            try:
                linked = os.lstat(self.path)
            except OSError:
                linked = None
            if linked is not None and (linked.st_dev, linked.st_ino) != (now.dev, now.ino):
                return
        raise SourceChangedError("changed while being imported", locator=self.locator)

    def read_at(self, offset: int, length: int) -> bytes:
        """Bytes ``[offset, offset+length)`` clipped to the bound size."""
        end = min(offset + length, self.size)
        return os.pread(self.fd, end - offset, offset) if end > offset else b""

    def digest_range(self, hasher: Digest, start: int, end: int) -> None:
        """Feed bytes ``[start, end)`` of the snapshot to ``hasher``: those the stream read and kept, the rest
        read now."""
        pos = self._kept.feed(hasher, start, end)
        while pos < end:
            chunk = self.read_at(pos, min(CHUNK, end - pos, self._kept.next_kept(pos) - pos))
            if not chunk:
                raise SourceChangedError("shrank while being imported", locator=self.locator)
            hasher.update(chunk)
            pos = self._kept.feed(hasher, pos + len(chunk), end)

    def open_stream(self, start: int = 0, *, buffer_size: int = CHUNK, keep_from: int = 0) -> BinaryIO:
        """A buffered binary stream over the snapshot, positioned at ``start`` (a small ``buffer_size``
        suits reading only the first records); what it reads from ``keep_from`` on is kept for
        ``digest_range`` (what an earlier stream kept is dropped)."""
        self._kept = _Kept(keep_from)
        raw = _SnapshotIO(self.fd, self.size, self._kept)
        stream = io.BufferedReader(raw, buffer_size=buffer_size)
        stream.seek(start)
        return stream

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> BoundSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _with_ctime(identity: SourceIdentity, ctime_ns: int) -> SourceIdentity:
    return SourceIdentity(identity.dev, identity.ino, identity.size, identity.mtime_ns, ctime_ns,
                          identity.mode, identity.uid)


class _Kept:
    """The bytes streamed from ``keep_from`` on, a contiguous run ``[start, end)``, until they are hashed."""

    def __init__(self, keep_from: int) -> None:
        self.start = self.end = keep_from
        self.chunks: deque[tuple[int, bytes]] = deque()
        self.size = 0

    def add(self, offset: int, data: bytes) -> None:
        if offset < self.start:  # read again before the run (a replayed prefix already hashed): not kept
            data, offset = data[self.start - offset:], self.start
        if not data:
            return
        if offset != self.end or self.size + len(data) > KEEP_BYTES:
            self.chunks.clear()  # a gap or too much: forget the run, digest_range reads it again
            self.start, self.size = offset, 0
        self.chunks.append((offset, data))
        self.size += len(data)
        self.end = offset + len(data)

    def feed(self, hasher: Digest, pos: int, end: int) -> int:
        """Hash the kept bytes from ``pos`` towards ``end``; the position reached. Bytes before it are dropped."""
        chunks = self.chunks
        while chunks and pos < end:
            offset, data = chunks[0]
            if offset + len(data) <= pos:
                chunks.popleft()
                self.size -= len(data)
                continue
            if offset > pos:
                break
            upto = min(end, offset + len(data))
            hasher.update(memoryview(data)[pos - offset:upto - offset])
            pos = upto
        self.start = max(self.start, pos)
        return pos

    def next_kept(self, pos: int) -> int:
        """Where the kept bytes after ``pos`` begin (a large number: none)."""
        return self.chunks[0][0] if self.chunks and self.chunks[0][0] > pos else 1 << 62


class _SnapshotIO(io.RawIOBase):
    """Positional reads (``pread``) of a descriptor, never past the bound size, never moving its offset; what
    it reads goes to ``kept`` too."""

    def __init__(self, fd: int, size: int, kept: _Kept) -> None:
        super().__init__()
        self._fd = fd
        self._size = size
        self._pos = 0
        self._kept = kept

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        want = min(len(buffer), self._size - self._pos)
        if want <= 0:
            return 0
        view = memoryview(buffer)[:want]
        n = os.preadv(self._fd, [view], self._pos)
        self._kept.add(self._pos, bytes(view[:n]))
        self._pos += n
        return n
