"""Custom sensitive patterns: ``security.sensitive_patterns`` plus the project's sensitive-patterns.txt.

The project file holds one RE2 regex per line; blank lines and lines starting
with ``#`` are ignored. Each pattern becomes a keyword-less rule whose id is
``sensitive-<first 12 hex of its SHA-256>`` (stable, and never the pattern).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from lcm_framework.plugin_api import Rule, RulePack, ScrubberError, atomic_write_private

PACK_NAME = "sensitive-patterns"
CATEGORY = "sensitive-pattern"


def project_patterns_file(project_root: Path) -> Path:
    return project_root / ".lcm" / "sensitive-patterns.txt"


def read_patterns(path: Path) -> list[str]:
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScrubberError(f"cannot read {path}: {type(exc).__name__}") from None
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def write_patterns(path: Path, patterns: Sequence[str]) -> None:
    atomic_write_private(path, "".join(p + "\n" for p in patterns).encode("utf-8"))


def rule_id(pattern: str) -> str:
    return "sensitive-" + hashlib.sha256(pattern.encode("utf-8")).hexdigest()[:12]


def custom_pack(global_patterns: Sequence[str], project_patterns: Sequence[str], project_file: Path) -> RulePack:
    rules: dict[str, Rule] = {}
    sources = [(p, f"security.sensitive_patterns #{i + 1}") for i, p in enumerate(global_patterns)]
    sources += [(p, f"{project_file} pattern #{i + 1}") for i, p in enumerate(project_patterns)]
    for pattern, where in sources:
        rules.setdefault(pattern, Rule(id=rule_id(pattern), regex=pattern, description=where, category=CATEGORY))
    return RulePack(name=PACK_NAME, rules=tuple(rules.values()), source="configuration")
