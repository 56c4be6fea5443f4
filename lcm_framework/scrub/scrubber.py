"""The scrubber: redact secrets in every key and string of a record, then verify and hash it.

``scrub_record`` follows the spec's order: recursive redaction of keys and
values, redacted-key collision check, canonical JSON (sorted keys, compact,
``ensure_ascii=False``), a rescan of that complete text with every effective
rule (a residual match is refused), then SHA-256 of the canonical JSON.

To stay fast, a record is first checked as a whole: one keyword scan of its
canonical JSON picks the candidate rules (none for most records; a keyword
inside the format's structural keys with non-string values does not count).
The candidates' regexes (each compiled once, in its ``(?m)`` form) then search the
canonical JSON and, when none finds anything there, a text where every key and string of
the record is a line (the canonical JSON with quotes turned into newlines
when it has no escape, else the strings joined by newlines). When it matches
neither (most records again), there is nothing to redact and nothing
residual. Otherwise each candidate runs once over the joined strings; only
the strings its matches touch are scrubbed one by one.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from .. import compact_json
from ..errors import ScrubberError
from ..transcripts.reader import Reason
from .rules import CompiledRule
from .scanner import Hit, Scanner

PIPELINE_VERSION = "3"
"""2: keywords inside structural keys with non-string values select no rule. 3: every rule searches the
text as given, so one rule's redaction never hides another rule's secret."""


@dataclass(frozen=True, slots=True)
class Finding:
    """Where a rule matched: offsets (characters) of the secret, 1-based line and column. Never the secret."""

    rule_id: str
    start: int
    end: int
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class ScrubbedRecord:
    value: dict[str, Any] | list[Any]
    canonical_json: str
    sha256: str
    redactions: dict[str, int]
    """Redaction counts per category."""


class ScrubRejected(ScrubberError):
    """A record that cannot be stored safely. The message never contains record content."""

    def __init__(self, reason: Reason, detail: str = "") -> None:
        self.reason = reason
        super().__init__(f"record refused by the scrubber: {reason.value}" + (f" ({detail})" if detail else ""))


def canonical_bytes(value: Any, *, float_free: bool = False) -> bytes:
    """Sorted keys, compact separators, literal Unicode, UTF-8: what is rescanned, hashed and stored
    (``float_free``: ``value`` is known to hold no float)."""
    try:
        return compact_json.dumps(value, sort_keys=True, float_free=float_free)
    except UnicodeEncodeError:
        raise ScrubRejected(Reason.MALFORMED_JSON, "lone surrogate") from None
    except (TypeError, ValueError):
        raise ScrubRejected(Reason.MALFORMED_JSON, "not representable as JSON") from None


def canonical_json(value: Any) -> str:
    """``canonical_bytes`` as text."""
    return canonical_bytes(value).decode("utf-8")


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ScrubRejected(Reason.MALFORMED_JSON, "lone surrogate") from None


_CONTAINERS = (dict, list)


def _strings(value: Any) -> list[str]:
    """Every key and string value in the tree, repeats included."""
    found: list[str] = []
    add = found.append
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in node:
                if isinstance(key, str):
                    add(key)
            node = node.values()
        for child in node:
            if isinstance(child, str):
                add(child)
            elif isinstance(child, _CONTAINERS):
                stack.append(child)
    return found


def _joined(strings: list[str]) -> bytes:
    return "\n".join(strings).encode("utf-8", "surrogatepass")


def _scrubbed(value: dict[str, Any] | list[Any], data: bytes, redactions: dict[str, int]) -> ScrubbedRecord:
    return ScrubbedRecord(value, data.decode("utf-8"), hashlib.sha256(data).hexdigest(), redactions)


def _rebuild(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [_rebuild(v, mapping) for v in value]
    if isinstance(value, dict):
        out = {mapping.get(k, k): _rebuild(v, mapping) for k, v in value.items()}
        if len(out) != len(value):
            raise ScrubRejected(Reason.REDACTED_KEY_COLLISION)
        return out
    return value


class Scrubber:
    """Redacts with a fixed, compiled rule set. Thread-safe (its only mutable state is a cache of compiled regexes)."""

    def __init__(self, rules: Sequence[CompiledRule], digest: str, structural_keys: Collection[str] = ()) -> None:
        """``structural_keys``: the object keys of the formats' representative records (``input_tokens``
        ...); a keyword found only inside them, where they hold no string, selects no rule for a record."""
        self.digest = digest
        self.version = f"lcm-scrub/{PIPELINE_VERSION}:{digest}"
        self._scanner = Scanner(rules, structural_keys)
        self.rules = self._scanner.rules
        """The text rules, in application order (path-only rules excluded)."""

    # --- text ---------------------------------------------------------------------------------------
    def scrub_text(self, text: str) -> tuple[str, dict[str, int]]:
        """``text`` with every secret replaced by ``[REDACTED:<rule id>]``, and counts per category."""
        data = _encode(text)
        candidates = self._scanner.candidates(data)
        if not candidates:
            return text, {}
        counts: Counter[str] = Counter()
        out = self._scanner.redact(data, candidates, counts)
        return (out.decode("utf-8") if counts else text), dict(counts)

    def findings(self, text: str) -> list[Finding]:
        """Every rule match in ``text`` (each rule independently, like ``gitleaks``), in text order."""
        return self.scan_bytes(_encode(text))

    def path_findings(self, path: str) -> list[str]:
        """Ids of the path-only rules (gitleaks file-name rules) that flag ``path``."""
        return [rule.id for rule in self._scanner.path_hits(path)]

    def scan_bytes(self, data: bytes, path: str | None = None) -> list[Finding]:
        """Findings in UTF-8 ``data``; ``path`` enables path-scoped rules and path allowlists."""
        hits = self._scanner.hits(data, self._scanner.candidates(data, path), path)
        return sorted((_finding(data, h) for h in hits), key=lambda f: (f.start, f.rule_id))

    # --- records ------------------------------------------------------------------------------------
    def scrub_record(self, value: dict[str, Any] | list[Any], *, float_free: bool = False) -> ScrubbedRecord:
        """Scrub, collision-check, canonicalize, rescan and hash one parsed record (``float_free``: the reader
        knows it holds no float, ``ParsedRecord.float_free``).

        Raises ``ScrubRejected`` (redacted-key-collision or residual-secret). When
        nothing is redacted the returned ``value`` is the object passed in.
        """
        if not isinstance(value, dict | list):
            raise ScrubRejected(Reason.NON_CONTAINER_JSON)
        data = canonical_bytes(value, float_free=float_free)
        candidates = self._scanner.candidates(data, record=True)
        if not candidates:
            return _scrubbed(value, data, {})
        gate = self._scanner.gate(candidates)
        listed: list[str] | None = None
        if gate is not None and not gate.matches(data):
            if b"\\" in data:
                listed = _strings(value)
                lines = _joined(listed)
            else:  # no escape: with its quotes turned into newlines, every key and string is a line
                lines = data.replace(b'"', b"\n")
            if not gate.matches(lines):
                return _scrubbed(value, data, {})
            in_data = False
        else:
            in_data = True
        occurrences = Counter(_strings(value) if listed is None else listed)
        strings = list(occurrences)
        counts: Counter[str] = Counter()
        mapping = self._redactions(occurrences, strings, candidates, counts)
        if mapping:
            value = _rebuild(value, mapping)
            data = canonical_bytes(value, float_free=float_free)
            candidates = self._scanner.candidates(data, record=True)
        elif not in_data:
            return _scrubbed(value, data, {})
        hit = self._scanner.first_hit(data, candidates)
        if hit is not None:
            raise ScrubRejected(Reason.RESIDUAL_SECRET, f"rule {hit.rule.id}")
        return _scrubbed(value, data, dict(counts))

    def _redactions(
        self, occurrences: Counter[str], strings: list[str], candidates: list[int], counts: Counter[str]
    ) -> dict[str, str]:
        """Map each key or string that holds a secret to its scrubbed form (``strings``: the distinct keys and
        strings of the record in order, ``occurrences`` how often each occurs)."""
        encoded = [text.encode("utf-8", "surrogatepass") for text in strings]  # canonical_bytes refused surrogates
        joined = b"\n".join(encoded)
        starts: list[int] | None = None
        touched: dict[int, list[int]] = {}
        for index in candidates:
            multiline = self._scanner.multiline(index)
            spans = [(0, len(joined))] if multiline is None else [m.span() for m in multiline.finditer(joined)]
            if not spans:
                continue
            if starts is None:
                starts = list(accumulate((len(e) + 1 for e in encoded), initial=0))  # + the newline
            for s, e in spans:
                first = bisect.bisect_right(starts, s) - 1
                last = bisect.bisect_right(starts, max(s, e - 1)) - 1
                for j in range(first, last + 1):
                    rules = touched.setdefault(j, [])
                    if not rules or rules[-1] != index:
                        rules.append(index)
        mapping: dict[str, str] = {}
        for j, indices in touched.items():
            text = strings[j]
            lowered = text.lower()
            usable = [i for i in indices if _keyword_in(self.rules[i], lowered)]
            if not usable:
                continue
            found: Counter[str] = Counter()
            out = self._scanner.redact(encoded[j], usable, found)
            if found:
                mapping[text] = out.decode("utf-8")
                for category, n in found.items():
                    counts[category] += n * occurrences[text]
        return mapping


def _keyword_in(rule: CompiledRule, lowered: str) -> bool:
    return not rule.keywords or any(k in lowered for k in rule.keywords)


def _finding(data: bytes, hit: Hit) -> Finding:
    line_start = data.rfind(b"\n", 0, hit.start) + 1
    start = len(data[: hit.start].decode("utf-8", "replace"))
    end = start + len(data[hit.start : hit.end].decode("utf-8", "replace"))
    column = len(data[line_start : hit.start].decode("utf-8", "replace")) + 1
    return Finding(hit.rule.id, start, end, data.count(b"\n", 0, hit.start) + 1, column)
