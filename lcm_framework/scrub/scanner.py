"""Find validated rule matches in UTF-8 bytes, fast.

Speed comes from gitleaks' own trick done in one pass: every rule keyword
goes into one case-insensitive literal ``re2.Set``, so a single DFA scan of a
fragment tells which rules can apply; only those regexes run. A match counts
when its secret passes the rule's entropy threshold and no allowlist keeps it;
matches inside an existing ``[REDACTED:...]`` marker never count.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import re2

from .rules import CompiledRule, shannon_entropy

MARKER_PREFIX = b"[REDACTED:"
_MARKER = re.compile(rb"\[REDACTED:[A-Za-z0-9_.:-]{1,200}\]")


@dataclass(frozen=True, slots=True)
class Hit:
    """A validated match: the secret's byte span in the scanned fragment."""

    rule: CompiledRule
    start: int
    end: int


class Scanner:
    """Keyword prefilter plus validated matching over a fixed list of compiled rules."""

    def __init__(self, rules: Sequence[CompiledRule]) -> None:
        self.path_rules = tuple(r for r in rules if r.regex is None)
        self.rules = tuple(r for r in rules if r.regex is not None)
        self._always = frozenset(i for i, r in enumerate(self.rules) if not r.keywords)
        self._path_scoped = frozenset(i for i, r in enumerate(self.rules) if r.path is not None)
        keywords = sorted({k for r in self.rules for k in r.keywords})
        by_keyword: dict[str, list[int]] = {k: [] for k in keywords}
        for i, rule in enumerate(self.rules):
            for k in rule.keywords:
                by_keyword[k].append(i)
        self._keyword_rules = [tuple(by_keyword[k]) for k in keywords]
        self._set = None
        if keywords:
            options = re2.Options()
            options.literal = True
            options.case_sensitive = False
            options.max_mem = 64 << 20
            options.log_errors = False
            self._set = re2.Set.SearchSet(options)
            for keyword in keywords:
                self._set.Add(keyword)
            self._set.Compile()

    def candidates(self, data: bytes, path: str | None = None) -> list[int]:
        """Indices (in rule order) of the rules whose keywords occur in ``data``, plus keyword-less rules."""
        found = set(self._always)
        if self._set is not None:
            for k in self._set.Match(data) or ():
                found.update(self._keyword_rules[k])
        if self._path_scoped:
            found = {i for i in found if i not in self._path_scoped or self._path_ok(i, path)}
        return sorted(found)

    def _path_ok(self, index: int, path: str | None) -> bool:
        rx = self.rules[index].path
        return path is not None and rx is not None and rx.search(path) is not None

    def path_hits(self, path: str) -> list[CompiledRule]:
        """The path-only rules whose path regex matches ``path``."""
        return [r for r in self.path_rules if r.path is not None and r.path.search(path)]

    def hits(self, data: bytes, indices: Iterable[int], path: str | None = None) -> list[Hit]:
        """Every validated match of the given rules (independently, as gitleaks reports them)."""
        markers = _marker_spans(data)
        found: list[Hit] = []
        for i in indices:
            rule = self.rules[i]
            found.extend(Hit(rule, s, e) for s, e in self._rule_hits(rule, data, path, markers))
        return found

    def first_hit(self, data: bytes, indices: Iterable[int], path: str | None = None) -> Hit | None:
        markers = _marker_spans(data)
        for i in indices:
            rule = self.rules[i]
            for s, e in self._rule_hits(rule, data, path, markers):
                return Hit(rule, s, e)
        return None

    def redact(self, data: bytes, indices: Iterable[int], counts: Counter[str]) -> bytes:
        """Apply the rules one after another, replacing each secret with the rule's marker."""
        for i in indices:
            rule = self.rules[i]
            spans = list(self._rule_hits(rule, data, None, _marker_spans(data)))
            if not spans:
                continue
            counts[rule.category] += len(spans)
            marker = rule.marker.encode()
            pieces: list[bytes] = []
            last = 0
            for s, e in spans:
                pieces.append(data[last:s])
                pieces.append(marker)
                last = e
            pieces.append(data[last:])
            data = b"".join(pieces)
        return data

    def _rule_hits(
        self, rule: CompiledRule, data: bytes, path: str | None, markers: list[tuple[int, int]]
    ) -> Iterable[tuple[int, int]]:
        """Validated secret spans in text order, never overlapping.

        After a match that fails validation the search resumes one byte after
        its start (not after its end), so a refused match never hides a real
        secret overlapping it.
        """
        regex = rule.regex
        if regex is None:
            return
        pos, size = 0, len(data)
        while pos <= size:
            m = regex.search(data, pos)
            if m is None:
                return
            span = _secret_span(rule, m)
            if span is not None and not _inside(span, markers) and self._valid(rule, data, m, span, path):
                yield span
                pos = max(m.end(), m.start() + 1)
            else:
                pos = m.start() + 1

    @staticmethod
    def _valid(rule: CompiledRule, data: bytes, m: object, span: tuple[int, int], path: str | None) -> bool:
        secret = data[span[0] : span[1]].decode("utf-8", "replace")
        if rule.entropy is not None:
            if shannon_entropy(secret) <= rule.entropy:
                return False
            if rule.needs_digit and not any(c.isdigit() for c in secret):
                return False
        if rule.allowlists:
            start, end = m.span()  # type: ignore[attr-defined]
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = data.find(b"\n", end)
            line = data[line_start : line_end if line_end != -1 else len(data)]
            match = data[start:end]
            if any(a.allows(secret, match, line, path) for a in rule.allowlists):
                return False
        return True


def _secret_span(rule: CompiledRule, m: object) -> tuple[int, int] | None:
    """gitleaks' choice of secret: ``secretGroup``, else the first non-empty group, else the whole match."""
    if rule.secret_group:
        start, end = m.span(rule.secret_group)  # type: ignore[attr-defined]
    else:
        start, end = m.span()  # type: ignore[attr-defined]
        for group in range(1, rule.groups + 1):
            s, e = m.span(group)  # type: ignore[attr-defined]
            if e > s:
                start, end = s, e
                break
    if start < 0 or end <= start:
        return None
    return start, end


def _marker_spans(data: bytes) -> list[tuple[int, int]]:
    if MARKER_PREFIX not in data:
        return []
    return [m.span() for m in _MARKER.finditer(data)]


def _inside(span: tuple[int, int], markers: list[tuple[int, int]]) -> bool:
    return any(s <= span[0] and span[1] <= e for s, e in markers)
