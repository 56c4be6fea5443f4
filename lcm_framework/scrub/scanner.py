"""Find validated rule matches in UTF-8 bytes, fast.

Speed comes from gitleaks' own trick done in one pass: every rule keyword
goes into one case-insensitive literal ``re2.Set``, so a single DFA scan of a
fragment tells which rules can apply; only those regexes run. A match counts
when its secret passes the rule's entropy threshold and no allowlist keeps it;
matches inside an existing ``[REDACTED:...]`` marker never count.

For a record's canonical JSON, a keyword found only inside the format's
structural keys (``input_tokens`` holds ``token``) selects no rule when each
such key holds a number, boolean, null, object or array: the usage counters
of every assistant record would otherwise send it down the slow path.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from ..errors import ScrubberError
from .rules import CompiledRule, compile_regex, shannon_entropy

MARKER_PREFIX = b"[REDACTED:"
_MARKER = re.compile(rb"\[REDACTED:[A-Za-z0-9_.:-]{1,200}\]")
_LONG_S, _KELVIN = "\u017f".encode(), "\u212a".encode()
"""The only characters that RE2's case folding matches with an ASCII letter (``s``, ``k``)."""
_OBJECT_OPENERS = frozenset(b"{,")


@dataclass(frozen=True, slots=True)
class Gate:
    """Whether any of a few rules' ``(?m)`` regexes matches a text: the record gate of ``Scrubber.scrub_record``."""

    regexes: tuple[Any, ...]

    def matches(self, data: bytes) -> bool:
        return any(rx.search(data) is not None for rx in self.regexes)


@dataclass(frozen=True, slots=True)
class Hit:
    """A validated match: the secret's byte span in the scanned fragment."""

    rule: CompiledRule
    start: int
    end: int


class Scanner:
    """Keyword prefilter plus validated matching over a fixed list of compiled rules."""

    def __init__(self, rules: Sequence[CompiledRule], structural_keys: Collection[str] = ()) -> None:
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
        self._keywords = [k.encode() for k in keywords]
        plain = [key for key in structural_keys if _plain_key(key)]
        self._holding_keys = [
            frozenset(key.encode() for key in plain if k in key.lower()) if k.isascii() else frozenset()
            for k in keywords
        ]
        """Per keyword: the structural keys it occurs in (a keyword found only there selects no rule)."""
        self._multiline: dict[int, Any] = {}
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

    def candidates(self, data: bytes, path: str | None = None, *, record: bool = False) -> list[int]:
        """Indices (in rule order) of the rules whose keywords occur in ``data``, plus keyword-less rules.

        ``record``: ``data`` is a record's canonical JSON, where occurrences inside structural keys with
        non-string values do not count.
        """
        matched = self._set.Match(data) if self._set is not None else None
        if not matched and not self._always:
            return []
        found = set(self._always)
        held: list[int] = []
        for k in matched or ():
            if record and self._holding_keys[k]:
                held.append(k)
            else:
                found.update(self._keyword_rules[k])
        if held:
            lowered, folds = data.lower(), _folds_to_ascii(data)
            for k in held:
                rules = self._keyword_rules[k]
                if not found.issuperset(rules) and (
                    folds or _outside_keys(data, lowered, self._keywords[k], self._holding_keys[k])
                ):
                    found.update(rules)
        if self._path_scoped:
            found = {i for i in found if i not in self._path_scoped or self._path_ok(i, path)}
        return sorted(found)

    def gate(self, indices: Sequence[int]) -> Gate | None:
        """The rules of ``indices`` as one test: does any of them match a text (unvalidated)? None when some rule
        has no ``(?m)`` form. Each rule's ``(?m)`` regex is compiled once and searched in turn (RE2 search falls
        back from its DFA to the NFA when it must, so the answer is exact)."""
        regexes = [self.multiline(i) for i in indices]
        if not regexes or any(rx is None for rx in regexes):
            return None
        return Gate(tuple(regexes))

    def multiline(self, index: int) -> Any:
        """Rule ``index``'s regex with ``(?m)``, compiled on first use; None when it has no such form."""
        if index not in self._multiline:
            self._multiline[index] = self._multiline_form(index) if self.rules[index].multiline else None
        return self._multiline[index]

    def _multiline_form(self, index: int) -> Any:
        """``(?m)(?:rule)`` without capturing groups; None when RE2 refuses it."""
        try:
            return compile_regex(f"(?m)(?:{_source(self.rules[index].regex)})", "the (?m) form of a rule",
                                 capture=False)
        except ScrubberError:
            return None

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
        """Replace every secret each rule finds in ``data`` (as ``hits`` reports them) with the rule's marker.

        Every rule searches the text as given, so one rule's redaction never hides another rule's secret.
        In rule order, a secret wholly inside one already taken is not counted again; the part of a
        secret outside those gets the later rule's marker.
        """
        markers = _marker_spans(data)
        taken: list[tuple[int, int, bytes]] = []
        for i in indices:
            rule = self.rules[i]
            marker = rule.marker.encode()
            for s, e in self._rule_hits(rule, data, None, markers):
                free = _uncovered(s, e, taken)
                if free:
                    counts[rule.category] += 1
                    taken.extend((fs, fe, marker) for fs, fe in free)
        if not taken:
            return data
        pieces: list[bytes] = []
        last = 0
        for s, e, marker in sorted(taken):
            pieces.append(data[last:s])
            pieces.append(marker)
            last = e
        pieces.append(data[last:])
        return b"".join(pieces)

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


def _source(regex: Any) -> str:
    pattern = regex.pattern
    return pattern.decode() if isinstance(pattern, bytes) else str(pattern)


def _plain_key(key: str) -> bool:
    """A key that canonical JSON writes verbatim (printable ASCII, no quote or backslash)."""
    return bool(key) and key.isascii() and key.isprintable() and '"' not in key and "\\" not in key


def _folds_to_ascii(data: bytes) -> bool:
    """Whether ``data`` holds a character that RE2's case folding matches with an ASCII letter."""
    return not data.isascii() and (_LONG_S in data or _KELVIN in data)


def _outside_keys(data: bytes, lowered: bytes, keyword: bytes, keys: frozenset[bytes]) -> bool:
    """Whether ``keyword`` occurs in canonical JSON ``data`` (with no character that folds to an ASCII letter,
    see ``_folds_to_ascii``) anywhere but inside one of ``keys`` used as an object key whose value is not a
    string.

    An occurrence is inside such a key when the quotes around it open right after ``{`` or ``,`` (so the
    first is not escaped: it opens a string), enclose exactly a key of ``keys`` (no backslash, so the
    second closes it), and are followed by ``:`` and anything but ``"``.
    """
    pos = lowered.find(keyword)
    while pos != -1:
        opening = data.rfind(b'"', 0, pos)
        closing = data.find(b'"', pos)
        if (
            opening < 1
            or closing < 0
            or data[opening + 1 : closing] not in keys
            or data[opening - 1] not in _OBJECT_OPENERS
            or not data.startswith(b":", closing + 1)
            or data.startswith(b'"', closing + 2)
        ):
            return True
        pos = lowered.find(keyword, closing)
    return False


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


def _uncovered(start: int, end: int, taken: Sequence[tuple[int, int, bytes]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` outside every span of ``taken`` (which never overlap each other)."""
    free = [(start, end)]
    for s, e, _marker in taken:
        free = [piece for fs, fe in free for piece in ((fs, min(fe, s)), (max(fs, e), fe)) if piece[0] < piece[1]]
    return free


def _inside(span: tuple[int, int], markers: list[tuple[int, int]]) -> bool:
    return any(s <= span[0] and span[1] <= e for s, e in markers)
