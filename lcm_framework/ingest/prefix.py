"""The running SHA-256 of a bound source's bytes from offset 0: what a checkpoint's ``prefix_sha256`` fences."""

from __future__ import annotations

import hashlib

from .errors import SourceChangedError
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

    def verify(self) -> None:
        """Rehash the whole hashed range once more: a same-size rewrite cannot hide behind times."""
        if self.upto and self.src.prefix_sha256(self.upto) != self.hasher.hexdigest():
            raise SourceChangedError("bytes changed while being imported", locator=self.src.locator)
        self.src.check()
