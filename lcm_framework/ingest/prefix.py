"""The running SHA-256 of a bound source's bytes from offset 0: what a checkpoint's ``prefix_sha256`` fences.

It hashes the bytes the import stream read (``BoundSource.digest_range``), so the digest is that of the very
bytes parsed, and reads only what no stream read (a checkpoint's prefix, verified before resuming)."""

from __future__ import annotations

import hashlib

from .source import BoundSource


class PrefixHash:
    """The digest of ``source`` bytes ``[0, upto)``, extended batch by batch."""

    def __init__(self, source: BoundSource) -> None:
        self.src = source
        self.reset()

    def reset(self) -> None:
        self.hasher = hashlib.sha256()
        self.upto = 0

    def extend(self, end: int) -> None:
        """Hash the bytes from ``upto`` to ``end``."""
        self.src.digest_range(self.hasher, self.upto, end)
        self.upto = end

    def hexdigest(self) -> str:
        return self.hasher.copy().hexdigest()
