"""What looks like a secret without any rule pack: known token prefixes and long high-entropy words.

Stdlib only and cheap to import, for the places that cannot wait for the scrubber (a hook capturing a
passive event, a configuration error naming a refused value). It is a first line, never the scrubber:
the full rule packs still run before such text is used or leaves the machine.
"""

from __future__ import annotations

import math
import re
from collections import Counter

TOKEN_SHAPE = re.compile(
    r"(?:gh[pousr]_|github_pat_|glpat-|xox[abposr]-|sk-|sk_live_|rk_live_|AKIA|ASIA|AIza|hf_|npm_|eyJ)"
    r"[A-Za-z0-9_\-.]{8,}"
    r"|-----BEGIN[^\n]*"
    r"|://[^/@\s]*:[^/@\s]*@"
)
"""Prefixes of common API tokens, a PEM block's first line, credentials inside a URL."""
HIGH_ENTROPY_MIN_LENGTH = 20
HIGH_ENTROPY_BITS = 3.5
HIGH_ENTROPY_MIN_PIECE = 12
"""A secret-looking word has a piece this long, between ``-``, ``_``, ``.``, ``/`` or backslash separators,
that mixes letters and digits: paths, UUIDs and dashed names do not (``src/components/Button2.tsx``,
``deploy-marker-3c8d``)."""
_PIECES = re.compile(r"[-_./\\]+")
REDACTED = "[REDACTED:secret-shape]"
_WORDS = re.compile(r"[^\s=:\"'`,;()<>\[\]{}]+")


def shannon_entropy(text: str) -> float:
    """Shannon entropy in bits per character, as gitleaks computes it for a secret."""
    if not text:
        return 0.0
    size = len(text)
    return -sum((n / size) * math.log2(n / size) for n in Counter(text).values())


def high_entropy_word(word: str) -> bool:
    """A word of ``HIGH_ENTROPY_MIN_LENGTH`` or more characters with at least ``HIGH_ENTROPY_BITS`` bits per
    character and a piece of ``HIGH_ENTROPY_MIN_PIECE`` or more mixing letters and digits."""
    return (len(word) >= HIGH_ENTROPY_MIN_LENGTH and shannon_entropy(word) >= HIGH_ENTROPY_BITS
            and any(len(piece) >= HIGH_ENTROPY_MIN_PIECE and _mixed(piece) for piece in _PIECES.split(word)))


def _mixed(text: str) -> bool:
    return any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def looks_like_secret(text: str) -> bool:
    """A known token shape anywhere, or the text is one long high-entropy word."""
    if TOKEN_SHAPE.search(text):
        return True
    word = text.strip()
    return not any(c.isspace() for c in word) and high_entropy_word(word)


def redact_shapes(text: str) -> str:
    """``text`` with every token shape and every high-entropy word replaced by ``REDACTED``."""
    text = TOKEN_SHAPE.sub(REDACTED, text)
    return _WORDS.sub(lambda m: REDACTED if high_entropy_word(m.group()) else m.group(), text)
