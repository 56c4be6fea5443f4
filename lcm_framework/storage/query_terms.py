"""How a full-text query is read, the same for every backend.

The query is split on whitespace into chunks; each chunk becomes its word
tokens (``\\w+``), matched as a phrase (so ``deploy-7f3a2`` or
``test_auth.py:103`` still match exactly where they were written). Stop
words are dropped at the ends of a chunk (``the``, ``worker's`` -> ``worker``)
and kept inside one (``end-of-line``): the list is PostgreSQL's ``english``
stop list, so both backends ignore the same words. Backends stem what is left
(SQLite FTS5 ``porter``, PostgreSQL ``english``): ``routes`` finds ``route``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STOP_LIST = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves what which who whom this that these those am is are
was were be been being have has had having do does did doing a an the and but if or because as until while
of at by for with about against between into through during before after above below to from up down in out
on off over under again further then once here there when where why how all any both each few more most
other some such no nor not only own same so than too very s t can will just don should now
"""
STOP_WORDS = frozenset(_STOP_LIST.split())

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Phrase:
    """One query chunk: as written (for a backend's own parser) and as its word tokens."""

    text: str
    words: list[str]


def query_phrases(text: str) -> list[Phrase]:
    """The query's phrases: each whitespace chunk without leading or trailing stop words (none left: dropped)."""
    phrases = []
    for chunk in text.split():
        words = _WORD.findall(chunk)
        while words and words[0].lower() in STOP_WORDS:
            words.pop(0)
        while words and words[-1].lower() in STOP_WORDS:
            words.pop()
        if words:
            phrases.append(Phrase(chunk, words))
    return phrases


def query_chunks(text: str) -> list[list[str]]:
    """The word tokens of each of ``query_phrases``."""
    return [phrase.words for phrase in query_phrases(text)]
