"""Load a gitleaks TOML configuration as a ``RulePack``.

Schema (gitleaks v8): ``[[rules]]`` with id, description, regex, secretGroup,
entropy, keywords, path, ``[[rules.allowlists]]`` (or the legacy
``[rules.allowlist]``); pack-wide ``[allowlist]`` / ``[[allowlists]]`` with
regexes, regexTarget, stopwords, paths, condition. Rules with only a ``path``
(file-name rules) are kept: they never match text, only file paths in
``lcm sensitive scan``. Regexes are not compiled here: the scrubber compiles
(and refuses) them when it is built.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from lcm_framework.plugin_api import Allowlist, Rule, RulePack, ScrubberError


def load_gitleaks_file(path: Path, name: str) -> RulePack:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScrubberError(f"cannot read gitleaks config {path}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ScrubberError(f"cannot read gitleaks config {path}: not UTF-8 text") from None
    return load_gitleaks_toml(text, name, source=str(path))


def load_gitleaks_toml(text: str, name: str, *, source: str = "") -> RulePack:
    where = source or name
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScrubberError(f"gitleaks config {where} is not valid TOML: {exc}") from None
    raw_rules = doc.get("rules", [])
    if not isinstance(raw_rules, list):
        raise ScrubberError(f"gitleaks config {where}: [[rules]] must be an array of tables")
    rules = []
    for i, raw in enumerate(raw_rules):
        what = f"gitleaks config {where} rule #{i + 1}"
        if not isinstance(raw, dict):
            raise ScrubberError(f"{what} is not a table")
        rules.append(_rule(raw, what))
    allowlists = _allowlists(doc.get("allowlist"), doc.get("allowlists"), f"gitleaks config {where}")
    return RulePack(name=name, rules=tuple(rules), allowlists=allowlists, source=where)


def _rule(raw: dict[str, Any], what: str) -> Rule:
    rule_id = _text(raw, "id", what)
    if not rule_id:
        raise ScrubberError(f"{what} has no id")
    entropy = raw.get("entropy")
    if entropy is not None and (isinstance(entropy, bool) or not isinstance(entropy, int | float)):
        raise ScrubberError(f"{what} ({rule_id}): entropy must be a number")
    group = raw.get("secretGroup", 0)
    if isinstance(group, bool) or not isinstance(group, int):
        raise ScrubberError(f"{what} ({rule_id}): secretGroup must be an integer")
    return Rule(
        id=rule_id,
        regex=_text(raw, "regex", what),
        description=_text(raw, "description", what),
        secret_group=group,
        entropy=float(entropy) if entropy is not None else None,
        keywords=_strings(raw, "keywords", what),
        allowlists=_allowlists(raw.get("allowlist"), raw.get("allowlists"), f"{what} ({rule_id})"),
        path=_text(raw, "path", what),
    )


def _allowlists(legacy: Any, many: Any, what: str) -> tuple[Allowlist, ...]:
    tables: list[Any] = []
    if legacy is not None:
        tables.append(legacy)
    if many is not None:
        if not isinstance(many, list):
            raise ScrubberError(f"{what}: allowlists must be an array of tables")
        tables.extend(many)
    out = []
    for i, table in enumerate(tables):
        where = f"{what} allowlist #{i + 1}"
        if not isinstance(table, dict):
            raise ScrubberError(f"{where} is not a table")
        out.append(
            Allowlist(
                regexes=_strings(table, "regexes", where),
                regex_target=_text(table, "regexTarget", where) or "secret",
                stopwords=_strings(table, "stopwords", where),
                paths=_strings(table, "paths", where),
                condition=(_text(table, "condition", where) or "OR").upper(),
                description=_text(table, "description", where),
            )
        )
    return tuple(out)


def _text(table: dict[str, Any], key: str, what: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise ScrubberError(f"{what}: {key} must be a string")
    return value


def _strings(table: dict[str, Any], key: str, what: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScrubberError(f"{what}: {key} must be a list of strings")
    return tuple(value)
