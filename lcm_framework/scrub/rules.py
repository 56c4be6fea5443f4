"""Compile gitleaks-schema rule packs into RE2 matchers.

Every regex is compiled with google-re2 (linear-time, Go RE2 syntax), so any
gitleaks TOML loads with the semantics gitleaks gives it. Matching runs on
UTF-8 bytes; offsets are byte offsets.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import re2

from ..errors import ScrubberError
from ..kernel.extensions import Allowlist, Rule, RulePack
from ..secret_shapes import shannon_entropy as shannon_entropy  # re-exported: gitleaks' entropy

_OPTIONS = re2.Options()
_OPTIONS.max_mem = 64 << 20  # room for the DFA of large gitleaks rules
_OPTIONS.log_errors = False  # RE2 would print the offending pattern (maybe a secret) on stderr
_SPAN_OPTIONS = re2.Options()
_SPAN_OPTIONS.max_mem, _SPAN_OPTIONS.log_errors, _SPAN_OPTIONS.never_capture = _OPTIONS.max_mem, False, True
_RULE_ID = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
_MULTILINE_UNSAFE = ("\\A", "\\z", "(?-m")


def compile_regex(pattern: str, what: str, *, capture: bool = True) -> Any:
    """Compile one RE2 regex; the error names ``what`` but never echoes the pattern (it may hold a secret).
    ``capture=False``: groups do not capture (a search then reports the whole match only, at less cost)."""
    try:
        return re2.compile(pattern, _OPTIONS if capture else _SPAN_OPTIONS)
    except re2.error:
        raise ScrubberError(f"{what} is not a valid RE2 regular expression") from None


@dataclass(frozen=True, slots=True)
class CompiledAllowlist:
    regexes: tuple[Any, ...]
    regex_target: str
    stopwords: tuple[str, ...]
    paths: tuple[Any, ...]
    all_required: bool

    def allows(self, secret: str, match: bytes, line: bytes, path: str | None) -> bool:
        """True when this allowlist keeps the finding (gitleaks' OR / AND over the criteria it specifies)."""
        checks: list[bool] = []
        if self.regexes:
            target: bytes = secret.encode() if self.regex_target == "secret" else match
            if self.regex_target == "line":
                target = line
            checks.append(any(rx.search(target) for rx in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(word in lowered for word in self.stopwords))
        if self.paths:
            checks.append(path is not None and any(rx.search(path) for rx in self.paths))
        if not checks:
            return False
        return all(checks) if self.all_required else any(checks)


@dataclass(frozen=True, slots=True)
class CompiledRule:
    id: str
    category: str
    pack: str
    regex: Any | None
    """None for a path-only rule."""
    multiline: bool
    """The regex with ``(?m)`` finds, over newline-joined strings, every string it matches (compiled on
    first use by the scanner)."""
    secret_group: int
    groups: int
    entropy: float | None
    needs_digit: bool
    keywords: tuple[str, ...]
    allowlists: tuple[CompiledAllowlist, ...]
    path: Any | None

    @property
    def marker(self) -> str:
        return f"[REDACTED:{self.id}]"


def _compile_allowlist(allow: Allowlist, what: str) -> CompiledAllowlist:
    target = allow.regex_target or "secret"
    if target not in {"secret", "match", "line"}:
        raise ScrubberError(f"{what}: regexTarget must be secret, match or line")
    condition = (allow.condition or "OR").upper()
    if condition not in {"OR", "AND"}:
        raise ScrubberError(f"{what}: condition must be OR or AND")
    return CompiledAllowlist(
        regexes=tuple(compile_regex(p, f"{what} regex #{i + 1}") for i, p in enumerate(allow.regexes)),
        regex_target=target,
        stopwords=tuple(w.lower() for w in allow.stopwords),
        paths=tuple(compile_regex(p, f"{what} path #{i + 1}") for i, p in enumerate(allow.paths)),
        all_required=condition == "AND",
    )


def compile_rule(rule: Rule, pack: RulePack, pack_allowlists: Sequence[CompiledAllowlist]) -> CompiledRule:
    where = f" from {pack.source}" if pack.source and pack.source != pack.name else ""
    about = f" ({rule.description})" if rule.description else ""
    what = f"rule {rule.id!r} of rule pack {pack.name!r}{where}{about}"
    if not _RULE_ID.fullmatch(rule.id):
        raise ScrubberError(f"{what}: a rule id is 1-200 characters of A-Z a-z 0-9 _ . : -")
    if not rule.regex:
        if not rule.path:
            raise ScrubberError(f"{what} has neither a regex nor a path")
        return _path_only(rule, pack, what)
    regex = compile_regex(rule.regex, what)
    if regex.search(b"") is not None:
        raise ScrubberError(f"{what} matches the empty string")
    if rule.secret_group < 0 or rule.secret_group > regex.groups:
        raise ScrubberError(f"{what}: secretGroup {rule.secret_group} does not exist in its regex")
    own = tuple(_compile_allowlist(a, f"{what} allowlist #{i + 1}") for i, a in enumerate(rule.allowlists))
    return CompiledRule(
        id=rule.id,
        category=rule.redaction_category,
        pack=pack.name,
        regex=regex,
        multiline=not any(token in rule.regex for token in _MULTILINE_UNSAFE),
        secret_group=rule.secret_group,
        groups=regex.groups,
        entropy=rule.entropy or None,
        needs_digit=bool(rule.entropy) and rule.id.startswith("generic"),
        keywords=tuple(sorted({k.lower() for k in rule.keywords if k})),
        allowlists=(*pack_allowlists, *own),
        path=compile_regex(rule.path, f"{what} path") if rule.path else None,
    )


def _path_only(rule: Rule, pack: RulePack, what: str) -> CompiledRule:
    """A gitleaks file-name rule: it never matches text, only a scanned file's path."""
    return CompiledRule(
        id=rule.id, category=rule.redaction_category, pack=pack.name, regex=None, multiline=False, secret_group=0,
        groups=0, entropy=None, needs_digit=False, keywords=(), allowlists=(),
        path=compile_regex(rule.path, f"{what} path"),
    )


def compile_packs(packs: Sequence[RulePack]) -> list[CompiledRule]:
    """Compile packs in sorted pack-name order (rules keep their order inside a pack)."""
    compiled: list[CompiledRule] = []
    for pack in sorted(packs, key=lambda p: p.name):
        shared = tuple(
            _compile_allowlist(a, f"rule pack {pack.name!r} allowlist #{i + 1}") for i, a in enumerate(pack.allowlists)
        )
        compiled.extend(compile_rule(rule, pack, shared) for rule in pack.rules)
    return compiled


def rules_digest(packs: Sequence[RulePack]) -> str:
    """SHA-256 over the effective rules (every field that changes what is redacted)."""

    def allow(a: Allowlist) -> list[Any]:
        return [list(a.regexes), a.regex_target, list(a.stopwords), list(a.paths), a.condition]

    doc = [
        [
            pack.name,
            [allow(a) for a in pack.allowlists],
            [
                [r.id, r.regex, r.secret_group, r.entropy, sorted(r.keywords), r.path, r.redaction_category,
                 [allow(a) for a in r.allowlists]]
                for r in pack.rules
            ],
        ]
        for pack in sorted(packs, key=lambda p: p.name)
    ]
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
