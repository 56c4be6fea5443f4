"""LCM's keys in a TOML file another program rewrites (an agent's ``config.toml``), added and removed as text.

Agents edit their TOML with editors that keep comments and formatting but
may attach a trailing comment to the end of the document and append every
new table there; a marked range ``# >>> ... # <<<`` would so swallow the
tables the agent adds later. LCM therefore owns no range: it owns
single keys (``table path, key, value``). Install appends a table header with
its keys (or a key into a table that exists); uninstall deletes exactly the
key lines whose value is still LCM's, and a header only when its table is left
empty. Every result is parsed again and compared with the intended document:
anything else (a multi-line value, a key written as a dotted or inline table)
is refused with a message, never written.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import LcmError

# The start and end comments of the marked block older installs appended; uninstall drops just these lines.
LEGACY_MARKERS = ("# >>> lcm: managed by `lcm install`; `lcm uninstall` removes this block", "# <<< lcm")
_HEADER = re.compile(r"^\s*\[")


@dataclass(frozen=True, slots=True)
class Key:
    """One key LCM writes: ``table`` (path of the table), ``name`` and ``value`` (a string or list of strings)."""

    table: tuple[str, ...]
    name: str
    value: Any

    def line(self) -> str:
        return f"{self.name} = {_value(self.value)}"


def parse(text: str, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LcmError(f"{what} is not valid TOML ({exc}); fix it, then run the command again") from None


def lookup(data: dict[str, Any], path: Sequence[str]) -> Any:
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def add(text: str, keys: Sequence[Key], what: str) -> str:
    """``text`` with every key set to LCM's value (new tables appended at the end)."""
    text = strip_legacy_markers(text)
    data = parse(text, what)
    lines = text.splitlines(keepends=True)
    expected = parse(text, what)
    for key in keys:
        table = lookup(data, key.table)
        if table is not None and lookup(table, [key.name]) == key.value:
            continue
        span = _table_span(lines, key.table)
        if span is None:
            if table is not None:
                raise LcmError(f"{what}: [{_header(key.table)}] is not written as a table header; "
                               f"set {key.name} = {_value(key.value)} there by hand")
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lines += ([] if not lines or not lines[-1].strip() else ["\n"]) + [f"[{_header(key.table)}]\n"]
            lines.append(key.line() + "\n")
        else:
            at = _key_line(lines, span, key.name)
            if at is None:
                lines.insert(span[0] + 1, key.line() + "\n")
            else:
                lines[at] = key.line() + "\n"
        node = expected
        for part in key.table:
            node = node.setdefault(part, {})
        node[key.name] = key.value
        data = parse("".join(lines), what)
    return _checked("".join(lines), expected, what)


def remove(text: str, keys: Sequence[Key], what: str) -> str:
    """``text`` without the keys whose value is still LCM's; tables left empty lose their header."""
    text = strip_legacy_markers(text)
    expected = parse(text, what)
    lines = text.splitlines(keepends=True)
    for key in keys:
        table = lookup(expected, key.table)
        if not isinstance(table, dict) or table.get(key.name) != key.value:
            continue  # absent, or changed by someone else: not LCM's any more
        span = _table_span(lines, key.table)
        at = None if span is None else _key_line(lines, span, key.name)
        if span is None or at is None:
            raise LcmError(f"{what}: {_header(key.table)}.{key.name} is not written the way `lcm install` "
                           "writes it; remove it by hand")
        del lines[at]
        del table[key.name]
        span = (span[0], span[1] - 1)
        if not table and _is_leaf(expected, key.table) and _only_blank(lines, span):
            start, end = span
            if start > 0 and not lines[start - 1].strip():
                start -= 1  # the blank line install put before the header
            del lines[start:end]
            _prune(expected, key.table, lines)
    return _checked("".join(lines), expected, what)


def strip_legacy_markers(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if line.rstrip("\r\n") not in LEGACY_MARKERS)


def _checked(text: str, expected: dict[str, Any], what: str) -> str:
    try:
        got = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LcmError(f"changing {what} would make it invalid TOML ({exc}); change it by hand") from None
    if got != expected:
        raise LcmError(f"{what} is laid out in a way `lcm install` cannot edit safely; change LCM's keys by hand")
    return text


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _header(path: Sequence[str]) -> str:
    return ".".join(p if re.fullmatch(r"[A-Za-z0-9_-]+", p) else json.dumps(p, ensure_ascii=False) for p in path)


def _header_path(line: str) -> tuple[str, ...] | None:
    """The table path of a ``[table]`` header line (``None`` for ``[[array]]`` headers and non-headers)."""
    stripped = line.strip()
    if not _HEADER.match(line) or stripped.startswith("[["):
        return None
    try:
        node: Any = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        (name, node), = node.items()
        path.append(name)
    return tuple(path)


def _table_span(lines: list[str], path: tuple[str, ...]) -> tuple[int, int] | None:
    """``(header index, index after the table's last line)`` of the ``[path]`` table."""
    for i, line in enumerate(lines):
        if _header_path(line) == path:
            end = i + 1
            while end < len(lines) and not _HEADER.match(lines[end]):
                end += 1
            return i, end
    return None


def _key_line(lines: list[str], span: tuple[int, int], name: str) -> int | None:
    pattern = re.compile(rf"^\s*(?:{re.escape(name)}|\"{re.escape(name)}\")\s*=")
    for i in range(span[0] + 1, span[1]):
        if pattern.match(lines[i]):
            return i
    return None


def _only_blank(lines: list[str], span: tuple[int, int]) -> bool:
    return all(not line.strip() for line in lines[span[0] + 1:span[1]])


def _is_leaf(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    table = lookup(data, path)
    return isinstance(table, dict) and not table


def _prune(data: dict[str, Any], path: tuple[str, ...], lines: list[str]) -> None:
    """Drop the empty table at ``path``, and its parents left empty unless they have a header of their own."""
    parents = [data]
    for part in path[:-1]:
        parents.append(parents[-1][part])
    del parents[-1][path[-1]]
    for depth in range(len(path) - 1, 0, -1):
        if parents[depth] or _table_span(lines, path[:depth]) is not None:
            break
        del parents[depth - 1][path[depth - 1]]
