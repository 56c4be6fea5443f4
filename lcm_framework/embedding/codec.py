"""Vectors as the semantic lane stores and scans them: signed bytes to store, sign bits to scan.

A unit vector is stored as one signed byte per dimension (``quantize``: scaled so its largest component is
127, a quarter of the float32 size). A scan compares the query's sign bits with every stored vector's
(``VectorIndex``: Hamming distance by ``numpy.bitwise_count`` over 64-bit words stored column by column, 32
bytes a vector at 256 dimensions, kept in memory and loaded incrementally; the nearest found through a
histogram of the distances instead of a partial sort), then ranks the best candidates exactly by cosine over
their stored bytes (``cosine``). Needs NumPy (the ``semantic`` extra), imported on first use.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, TypeVar

from .contracts import EmbeddingUnavailableError

K = TypeVar("K")

CANDIDATES = 8
"""Candidates ranked exactly per result wanted."""
MIN_CANDIDATES = 200


def numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise EmbeddingUnavailableError("the semantic lane needs NumPy: pip install 'lcm-framework[semantic]'") \
            from None
    return numpy


def quantize(vectors: Any) -> list[bytes]:
    """Each row of a float matrix as signed bytes, scaled so that its largest component is +-127."""
    np = numpy()
    rows = np.asarray(vectors, dtype=np.float32)
    if rows.ndim != 2:
        rows = rows.reshape(len(rows), -1)
    peak = np.abs(rows).max(axis=1, keepdims=True) if rows.size else np.zeros((len(rows), 1), np.float32)
    scaled = np.divide(rows * 127.0, peak, out=np.zeros_like(rows), where=peak > 0)
    return [row.tobytes() for row in np.rint(scaled).astype(np.int8)]


def candidates_wanted(limit: int) -> int:
    """How many sign-bit candidates a scan keeps for the exact cosine re-rank of ``limit`` results."""
    return max(limit * CANDIDATES, MIN_CANDIDATES)


def cosine(query: Sequence[float], stored: Iterable[tuple[K, bytes]], limit: int) -> list[tuple[K, float]]:
    """The best ``limit`` of ``stored`` (key, quantized vector) by cosine similarity with ``query``, best first;
    a vector of another length than the query's is left out."""
    np = numpy()
    q = np.asarray(query, dtype=np.float32)
    keys: list[K] = []
    blobs: list[bytes] = []
    for key, blob in stored:
        if len(blob) == len(q):
            keys.append(key)
            blobs.append(blob)
    if not keys or limit == 0:
        return []
    matrix = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(keys), len(q)).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1)
    qnorm = float(np.linalg.norm(q)) or 1.0
    scores = np.divide(matrix @ q, norms * qnorm, out=np.zeros(len(keys), np.float32), where=norms > 0)
    order = np.argsort(-scores, kind="stable")[:limit if limit > 0 else None]
    return [(keys[i], float(scores[i])) for i in order]


class VectorIndex:
    """The sign bits of a backend's stored vectors, in memory, with each one's row number and conversation.

    Rows are added in increasing row number (``last``: the highest held); a backend loads the rows after
    ``last`` before each scan. A row deleted since stays here and is dropped when the exact ranking finds no
    stored vector for it (``reset`` when most candidates were stale)."""

    def __init__(self) -> None:
        self.last = 0
        self.dimensions = 0
        self._pending: list[tuple[Any, Any, Any]] = []
        self._rows: Any = None
        self._conversations: Any = None
        self._codes: Any = None

    def __len__(self) -> int:
        self._merge()
        return 0 if self._rows is None else len(self._rows)

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def add(self, rows: Sequence[tuple[int, int, bytes]]) -> None:
        """``(row number, conversation id, quantized vector)`` rows, in increasing row number."""
        if not rows:
            return
        np = numpy()
        dims = len(rows[0][2])
        kept = [r for r in rows if len(r[2]) == dims]
        if self.dimensions and dims != self.dimensions:
            self.reset()
        self.dimensions = dims
        signs = np.frombuffer(b"".join(r[2] for r in kept), dtype=np.int8).reshape(len(kept), dims) > 0
        self._pending.append((np.fromiter((r[0] for r in kept), np.int64, len(kept)),
                              np.fromiter((r[1] for r in kept), np.int64, len(kept)),
                              _words(np, np.packbits(signs, axis=1))))
        self.last = max(self.last, rows[-1][0])

    def candidates(self, query: Sequence[float], count: int, *, conversations: Collection[int] | None = None,
                   excluded: Collection[int] = ()) -> list[int]:
        """Row numbers of the ``count`` stored vectors whose sign bits differ least from ``query``'s, nearest
        first; only those of ``conversations`` (when given) and none of ``excluded``."""
        self._merge()
        if self._rows is None or not len(self._rows) or count <= 0:
            return []
        np = numpy()
        q = np.asarray(query, dtype=np.float32)
        if len(q) != self.dimensions:
            return []
        words = _words(np, np.packbits(q > 0)[None, :])[:, 0]
        distance = np.bitwise_count(self._codes[0] ^ words[0]).astype(np.uint16)
        for column, word in zip(self._codes[1:], words[1:], strict=True):
            distance += np.bitwise_count(column ^ word)
        far = self.dimensions + 1
        if conversations is not None:
            distance[~np.isin(self._conversations, np.fromiter(conversations, np.int64))] = far
        if excluded:
            distance[np.isin(self._conversations, np.fromiter(excluded, np.int64))] = far
        # the smallest distance that ``count`` rows reach (a histogram: distances are 0..dimensions)
        reached = np.cumsum(np.bincount(distance, minlength=far + 1)[:far])
        if not len(reached) or reached[-1] == 0:
            return []
        cut = int(np.searchsorted(reached, min(count, int(reached[-1]))))
        picked = np.flatnonzero(distance <= cut)
        picked = picked[np.argsort(distance[picked], kind="stable")[:count]]
        return [int(r) for r in self._rows[picked]]

    def _merge(self) -> None:
        if not self._pending:
            return
        np = numpy()
        parts = ([(self._rows, self._conversations, self._codes)] if self._rows is not None else []) + self._pending
        self._rows = np.concatenate([p[0] for p in parts])
        self._conversations = np.concatenate([p[1] for p in parts])
        self._codes = np.concatenate([p[2] for p in parts], axis=1)
        self._pending = []


def _words(np: Any, packed: Any) -> Any:
    """Packed sign bits ``(rows, bytes)`` as columns ``(words, rows)``: 64-bit words when the bytes allow,
    else single bytes; a scan then counts differing bits column by column over contiguous memory."""
    if packed.shape[1] % 8 == 0:
        packed = np.ascontiguousarray(packed).view(np.uint64)
    return np.ascontiguousarray(packed.T)
