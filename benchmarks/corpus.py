"""Benchmark corpora made from the real sessions without repeating them: fresh ids and perturbed text.

Copying the ~0.9 MB of real Claude Code sessions until a corpus is large repeats every record's text
verbatim in every copy, which flatters exactly what is measured: a store that keeps each text once, a
compression dictionary trained on the first records, a scrubber cache. ``perturbed_copies`` writes copies
in which

* every id is fresh: each UUID-shaped string, ``toolu_``/``msg_``/``req_`` id and ``signature`` is
  replaced, consistently within a copy (``parentUuid`` still names the parent's ``uuid``);
* every free-text string (message text, tool input and output, file contents...) is perturbed: each word
  is replaced, with probability ``REPLACE``, by a word drawn from the real sessions' own vocabulary in
  proportion to its frequency there, and every digit by a random digit;
* left verbatim, and so repeated in every copy, are only the JSON keys, the values of ``STRUCTURAL``
  keys (record and block types, roles, model and client version, working directory, branch) and the
  timestamps: what every real session repeats too.

The records keep the real sessions' shapes, sizes and vocabulary; no copy's text matches another's. The
words come from the sessions themselves, not from anything LCM weights (no summarizer keyword, no
identifier shape, no rule keyword beyond the sessions' own use of it).
"""

from __future__ import annotations

import random
import re
import uuid
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
SESSIONS = REPO.parent / "shared" / "testdata" / "transcripts" / "claude-code"
REPLACE = 0.3
"""Share of the words of every free-text string replaced in a copy."""
STRUCTURAL = frozenset({"type", "role", "model", "version", "userType", "stop_reason", "stop_sequence", "cwd",
                        "gitBranch", "timestamp", "service_tier", "status", "subtype", "level", "name"})
"""Keys whose values are enumerations or settings, left as they are (``name`` is a tool's name)."""
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PREFIXED_ID = re.compile(r"\b(toolu|msg|req|srvtoolu)_[A-Za-z0-9]{8,}")
_WORD = re.compile(r"[A-Za-z]+|[0-9]")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def originals() -> list[bytes]:
    """The real sessions' bytes (every ``*.jsonl`` of the shared test data), sorted by file name."""
    return [p.read_bytes() for p in sorted(SESSIONS.glob("*.jsonl"))]


def _strings(value: Any, key: str | None = None) -> Iterator[tuple[str | None, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def fresh_uuids(data: bytes, rng: random.Random) -> bytes:
    """``data`` with each distinct UUID replaced by a fresh one (the same one at every occurrence)."""
    ids: dict[bytes, bytes] = {}

    def fresh(m: re.Match[bytes]) -> bytes:
        if m.group() not in ids:
            ids[m.group()] = str(uuid.UUID(int=rng.getrandbits(128), version=4)).encode()
        return ids[m.group()]

    return _UUID.sub(fresh, data)


class Perturber:
    """Rewrites the real sessions into copies that share no free text, from one seeded generator."""

    def __init__(self, sessions: list[bytes], seed: int = 2026) -> None:
        self.rng = random.Random(seed)
        self.sessions = sessions
        counts: Counter[str] = Counter()
        for data in sessions:
            for line in data.splitlines():
                for key, text in _strings(orjson.loads(line)):
                    if key not in STRUCTURAL:
                        counts.update(w.lower() for w in _WORD.findall(text) if w.isalpha())
        self.words = list(counts)
        self.cumulative = list(accumulate(counts.values()))

    def copy(self, data: bytes) -> bytes:
        """One session with fresh ids and perturbed text."""
        data = fresh_uuids(data, self.rng)
        lines = [orjson.dumps(self._value(orjson.loads(line), None, {})) for line in data.splitlines() if line]
        return b"\n".join(lines) + b"\n"

    def _value(self, value: Any, key: str | None, names: dict[str, str]) -> Any:
        if isinstance(value, dict):
            return {k: self._value(v, k, names) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v, key, names) for v in value]
        if not isinstance(value, str) or key in STRUCTURAL or _UUID.fullmatch(value.encode()):
            return value
        if key == "signature":
            return "".join(self.rng.choice(_B64) for _ in value)
        value = _PREFIXED_ID.sub(lambda m: names.setdefault(m.group(), f"{m.group(1)}_{self._token(24)}"), value)
        return _WORD.sub(self._word, value)

    def _token(self, size: int) -> str:
        return "".join(self.rng.choice(_B64[:62]) for _ in range(size))

    def _word(self, m: re.Match[str]) -> str:
        word = m.group()
        if word.isdigit():
            return str(self.rng.randrange(10))
        if self.rng.random() >= REPLACE:
            return word
        new = self.rng.choices(self.words, cum_weights=self.cumulative)[0]
        return new.capitalize() if word[:1].isupper() else new


def perturbed_copies(target: Path, size: int, *, files_per_dir: int = 200, seed: int = 2026) -> int:
    """Perturbed copies of the real sessions under ``target`` until ``size`` bytes; returns the bytes written."""
    sessions = originals()
    perturber = Perturber(sessions, seed)
    written = n = 0
    while written < size:
        data = perturber.copy(sessions[n % len(sessions)])
        path = target / f"d{n // files_per_dir:04d}" / f"{uuid.UUID(int=perturber.rng.getrandbits(128))}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written += len(data)
        n += 1
    return written


def with_fresh_ids(pool: Path, target: Path, size: int, *, files_per_dir: int = 200) -> int:
    """The files of ``pool`` again and again under ``target`` until ``size`` bytes, each time with fresh UUIDs
    (their text repeats: for measurements that do not depend on it, which must say so); returns the bytes."""
    files = [p.read_bytes() for p in sorted(pool.rglob("*.jsonl"))]
    rng = random.Random(len(files))
    written = n = 0
    while written < size:
        data = fresh_uuids(files[n % len(files)], rng)
        path = target / f"d{n // files_per_dir:04d}" / f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written += len(data)
        n += 1
    return written


def distinct_texts(root: Path) -> tuple[int, int]:
    """(free-text strings, distinct ones) over every record under ``root``: what the corpus repeats."""
    total, seen = 0, set()
    for path in sorted(root.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            for key, text in _strings(orjson.loads(line)):
                if key not in STRUCTURAL and len(text) > 40:
                    total += 1
                    seen.add(text)
    return total, len(seen)
