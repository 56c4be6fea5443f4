"""The part of a stored text worth showing for a query: its best-matching sentences, within a character cap."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..storage.query_terms import query_chunks

_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(r"[^\n.!?]*(?:[.!?]+(?=\s|$)|\n|$)")
_SUFFIXES = ("ing", "ed", "es", "s")
ELLIPSIS = "…"


def stem(word: str) -> str:
    """A crude English stem (``routes``, ``routed``, ``routing`` -> ``rout``), for choosing sentences only:
    ranking is the backend's (FTS5 porter, PostgreSQL ``english``)."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def query_stems(query: str) -> frozenset[str]:
    """The stems of the query's words, stop words dropped as the backends drop them."""
    return frozenset(stem(w) for chunk in query_chunks(query) for w in chunk)


def matches(text: str, stems: Iterable[str]) -> int:
    """How many of ``stems`` occur in ``text``."""
    found = {stem(w) for w in _WORD.findall(text)}
    return sum(1 for s in stems if s in found)


def _sentences(text: str) -> list[tuple[int, int]]:
    spans = []
    for found in _SENTENCE.finditer(text):
        start, end = found.span()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


def best_sentence(text: str, stems: frozenset[str]) -> str:
    """The sentence of ``text`` matching most of ``stems`` (the first one on ties), spaces collapsed."""
    spans = _sentences(text)
    if not spans:
        return ""
    a, b = max(spans, key=lambda span: (matches(text[span[0]:span[1]], stems), -span[0]))
    return " ".join(text[a:b].split())


def passage(text: str, stems: frozenset[str], cap: int) -> str:
    """The sentence of ``text`` matching most of ``stems`` (the first one on ties; the text's start when none
    matches), widened by the sentences after then before it while it fits ``cap`` characters; ``…`` marks
    a cut. A sentence longer than ``cap`` is cut around its first matching word."""
    flat = text.strip()
    if len(flat) <= cap:
        return " ".join(flat.split())
    spans = _sentences(flat)
    if not spans:
        return ""
    scores = [matches(flat[a:b], stems) for a, b in spans]
    best = max(range(len(spans)), key=lambda i: (scores[i], -i))
    first = last = best
    while True:
        grown = False
        if last + 1 < len(spans) and spans[last + 1][1] - spans[first][0] <= cap:
            last += 1
            grown = True
        if first > 0 and spans[last][1] - spans[first - 1][0] <= cap:
            first -= 1
            grown = True
        if not grown:
            break
    start, end = spans[first][0], spans[last][1]
    if end - start > cap:  # one sentence longer than the cap: around its first match
        at = _first_match(flat, start, end, stems)
        start = max(start, min(at - cap // 4, end - cap))
        end = start + cap
    body = " ".join(flat[start:end].split())
    return (ELLIPSIS if start > 0 else "") + body + (ELLIPSIS if end < len(flat) else "")


def _first_match(text: str, start: int, end: int, stems: frozenset[str]) -> int:
    for found in _WORD.finditer(text, start, end):
        if stem(found.group()) in stems:
            return found.start()
    return start
