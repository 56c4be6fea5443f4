"""Deterministic exploration summaries of large files, by kind (about 200 tokens).

* code: language, line count, top-level definitions and classes with their line numbers;
* JSON / YAML / TOML: top-level keys with the shape of their values;
* logs: time span, line count, counts by level, the first error lines, first and last line;
* prose (Markdown and other text): headings with line numbers, else the opening lines.

The whole file is read, not an excerpt; the result always fits ``EXPLORATION_CHARS``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import PurePath

EXPLORATION_CHARS = 800

LANGUAGES = {
    ".py": "Python", ".pyi": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".jsx": "JavaScript",
    ".ts": "TypeScript", ".tsx": "TypeScript", ".go": "Go", ".rs": "Rust", ".java": "Java", ".kt": "Kotlin",
    ".rb": "Ruby", ".php": "PHP", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".hpp": "C++",
    ".cs": "C#", ".swift": "Swift", ".scala": "Scala", ".sh": "shell", ".bash": "shell", ".sql": "SQL",
    ".lua": "Lua", ".ex": "Elixir", ".exs": "Elixir",
}
_DEFINITION = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
    r"(?P<kind>def|class|function|func|fn|interface|type|struct|enum|trait|impl|module|const|let|var|CREATE TABLE)"
    r"\s+(?P<name>[A-Za-z_$][\w$.]*)",
    re.IGNORECASE,
)
_TIMESTAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?)")
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|CRITICAL|FATAL)\b")
_HEADING = re.compile(r"^(#{1,4})\s+(\S.*)$")
_YAML_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*[:=]")


def explore(content: str, name: str | None) -> str:
    """What ``content`` is and how it is laid out, for someone deciding whether to open it."""
    lines = content.splitlines()
    label = name or "pasted content"
    suffix = PurePath(name).suffix.lower() if name else ""
    head = f"{label}: {len(lines)} lines, {len(content)} characters"
    for describe in (_structured, _code, _log, _prose):
        body = describe(content, lines, suffix)
        if body:
            return _fit(f"{head}; {body}")
    opening = " | ".join(line.strip()[:120] for line in lines if line.strip())
    return _fit(f"{head}. Starts with: {opening}")


def _fit(text: str) -> str:
    return text if len(text) <= EXPLORATION_CHARS else text[: EXPLORATION_CHARS - 2].rstrip(" ,;|") + " …"


def _structured(content: str, lines: list[str], suffix: str) -> str | None:
    if suffix == ".json" or content.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(content)
        except ValueError:
            value = None
        if isinstance(value, dict):
            keys = ", ".join(f"{k} ({_shape(v)})" for k, v in list(value.items())[:40])
            return f"JSON object with {len(value)} top-level keys: {keys}"
        if isinstance(value, list):
            first = _shape(value[0]) if value else "empty"
            fields = ", ".join(value[0])[:300] if value and isinstance(value[0], dict) else ""
            return f"JSON array of {len(value)} items (first: {first}{'; keys ' + fields if fields else ''})"
    if suffix in (".yaml", ".yml", ".toml", ".ini", ".cfg", ".env"):
        kind = {".yml": "YAML", ".yaml": "YAML", ".toml": "TOML"}.get(suffix, "config")
        found = [f"{_config_key(line)} (line {n})" for n, line in enumerate(lines, 1) if _config_key(line)]
        return f"{kind} file; top-level keys: {', '.join(found) or 'none'}"
    return None


def _config_key(line: str) -> str:
    """A TOML/INI ``[section]`` header or a top-level ``key:`` / ``key =``; empty otherwise."""
    if line.startswith("["):
        return line.strip()
    found = _YAML_KEY.match(line)
    return found.group(1) if found else ""


def _shape(value: object) -> str:
    if isinstance(value, dict):
        return f"object, {len(value)} keys"
    if isinstance(value, list):
        return f"array of {len(value)}"
    return type(value).__name__ if value is not None else "null"


def _code(_content: str, lines: list[str], suffix: str) -> str | None:
    definitions = [(n, m.group("kind"), m.group("name")) for n, line in enumerate(lines, 1)
                   if (m := _DEFINITION.match(line))]  # top level: no indentation
    language = LANGUAGES.get(suffix)
    if language is None and len(definitions) < 3:
        return None
    listed = ", ".join(f"{kind} {name} (line {n})" for n, kind, name in definitions)
    return f"{language or 'source'} code, {len(definitions)} top-level definitions: {listed or 'none'}"


def _log(_content: str, lines: list[str], _suffix: str) -> str | None:
    stamped = [line for line in lines if _TIMESTAMP.match(line)]
    if len(stamped) < max(3, len(lines) // 3):
        return None
    first, last = _TIMESTAMP.match(stamped[0]), _TIMESTAMP.match(stamped[-1])
    levels = Counter(m.group(1).upper() for line in lines if (m := _LEVEL.search(line)))
    errors = [line.strip()[:160] for line in lines if re.search(r"ERROR|FATAL|CRITICAL|Exception|Traceback", line)]
    counts = ", ".join(f"{level} {n}" for level, n in levels.most_common())
    parts = [f"log from {first.group(1) if first else '?'} to {last.group(1) if last else '?'}",
             f"levels: {counts or 'none'}"]
    if errors:
        parts.append(f"{len(errors)} error lines, first: {' | '.join(errors[:3])}")
    parts.append(f"first line: {lines[0].strip()[:160]}; last line: {lines[-1].strip()[:160]}")
    return "; ".join(parts)


def _prose(_content: str, lines: list[str], suffix: str) -> str | None:
    headings = [f"{m.group(2).strip()[:80]} (line {n})" for n, line in enumerate(lines, 1)
                if (m := _HEADING.match(line))]
    if not headings and suffix not in (".md", ".rst", ".txt"):
        return None
    opening = " ".join(line.strip() for line in lines if line.strip() and not line.startswith("#"))[:200]
    return f"text with {len(headings)} headings: {', '.join(headings) or 'none'}. Opens: {opening}"
