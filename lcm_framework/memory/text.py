"""Text identity of memories: normalization and near-duplicate detection.

Two memories are the same insight when their normalized text is equal, or when
their content words (lower-cased, stop words dropped, crude English suffixes
removed) overlap enough: Jaccard >= ``JACCARD`` or, for texts of at least
``MIN_WORDS`` content words, the shorter one contained at ``CONTAINMENT``.
"""

from __future__ import annotations

import re

JACCARD = 0.6
CONTAINMENT = 0.8
MIN_WORDS = 3
_WORD = re.compile(r"[\w./-]+", re.UNICODE)
_STOP_WORDS = (
    "a an and are as at be by do does for from has have in into is it its of on or so that the their then this "
    "to was we were will with you your use using used instead rather than should must always "
    "i me my can could would why what when where which who how here there please again check look help want "
    "need let just also now not no"
)
_STOP = frozenset(_STOP_WORDS.split())
_SUFFIXES = ("ing", "ed", "es", "s")


def normalize(text: str) -> str:
    """Lower-cased words separated by one space (punctuation around words dropped)."""
    return " ".join(w.strip("./-") for w in _WORD.findall(text.lower()) if w.strip("./-"))


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in normalize(text).split() if w not in _STOP)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """How alike two content-word sets are (0..1): the larger of Jaccard and qualified containment."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    jaccard = shared / len(a | b)
    smaller = min(len(a), len(b))
    containment = shared / smaller if smaller >= MIN_WORDS else 0.0
    return max(jaccard, containment * JACCARD / CONTAINMENT)


def same_insight(a: str, b: str) -> bool:
    return normalize(a) == normalize(b) or similarity(content_words(a), content_words(b)) >= JACCARD
