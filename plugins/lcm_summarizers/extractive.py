"""The offline default: keep the lines an engineer needs later, within the target size.

One regular-expression pass over the segment finds signals (errors, commands,
decisions, paths, URLs, identifiers, measured numbers, message timestamps);
each line scores its strongest signal. The best lines that fit the budget are
emitted in their original (time) order, each under the timestamp of the
message it came from, followed by an inventory of every file path and URL the
segment mentions. Deterministic: the same segment always gives the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lcm_framework.summarize.tokens import estimate_tokens

if TYPE_CHECKING:
    from lcm_framework.config import Config
    from lcm_framework.summarize.contracts import SummaryRequest

NOTICE = (
    "lcm: using the offline extractive summarizer (no summarizer.model configured); "
    "summaries keep key lines verbatim instead of prose."
)
MAX_LINE = 240
_WEIGHTS = {"ts": 4, "error": 6, "command": 5, "decision": 4, "url": 3, "path": 3, "ident": 2, "number": 2}
_SIGNALS = re.compile(
    r"""
    (?P<ts>^\[?\d{4}-\d\d-\d\d[T\ ]\d\d:\d\d[^\]\s]*\]?)
    |(?P<error>Traceback\ \(most\ recent\ call\ last\)|\b[A-Z]\w*(?:Error|Exception)\b
        |\b(?:FAILED|FAIL|ERROR|FATAL|CRITICAL|panic|fatal|error|failed|failure)\b
        |exit\ (?:code|status)\ [1-9]|command\ not\ found|No\ such\ file|Permission\ denied)
    |(?P<command>^\s*[$>]\ \S|"command":\ ?"|\[tool_use\ \w+\]
        |\b(?:git|npm|npx|yarn|pnpm|pip|uv|python3?|pytest|cargo|go|make|docker|kubectl|ruff|mypy|node|bash
            |curl|lcm)\ (?=[-\w]))
    |(?P<decision>(?i:\b(?:decided|decision|we\ will|let's|i'll|going\ to|instead\ of|because|root\ cause
        |the\ fix|fixed|resolved|chose|conclusion|todo|important)\b))
    |(?P<url>https?://[^\s"'<>)\]]+)
    |(?P<path>(?:~|\.\.?)?/?(?:[\w.@-]+/)+[\w.@-]*\w|\b[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|jsonl|toml
        |yaml|yml|md|rs|go|java|kt|c|h|cc|cpp|hpp|sh|sql|txt|cfg|ini|lock|html|css|j2|xml|csv)\b)
    |(?P<ident>\b(?:def|class|function|fn|func|interface|struct|enum|type)\ [A-Za-z_]\w*|`[^`\n]{2,80}`)
    |(?P<number>\b\d+(?:\.\d+)?\ ?(?:ms|s|sec|seconds|minutes|[KMGT]i?B|%|tokens|bytes|lines|files|tests
        |passed|failed|errors)\b|\bv?\d+\.\d+\.\d+\b)
    """,
    re.VERBOSE | re.MULTILINE,
)


@dataclass(slots=True)
class _Line:
    start: int
    end: int
    weight: int
    focus: int
    stamp: str


class ExtractiveSummarizer:
    """Deterministic, offline summaries made of the segment's most informative lines."""

    name = "extractive"
    notice = NOTICE

    def __init__(self, config: Config | None = None) -> None:
        self.config = config

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def summarize(self, request: SummaryRequest) -> str:
        return extract(request.segment, request.target_tokens)


def extract(segment: str, target_tokens: int) -> str:
    """The lines of ``segment`` worth keeping, within about ``target_tokens`` tokens."""
    budget = max(target_tokens, 16) * 4
    if len(segment) <= budget:
        return segment.strip()
    lines, paths, first_stamp, last_stamp = _scan(segment)
    head = f"[extractive summary; {_span(first_stamp, last_stamp)}]"
    inventory = _inventory(paths, budget // 5)
    room = budget - len(head) - len(inventory) - 2
    chosen = _choose(segment, lines, room)
    body = _render(segment, chosen)
    total = segment.count("\n") + 1
    footer = f"Expand for details about: the other {total - len(chosen)} of {total} source lines"
    return "\n".join(part for part in (head, body, inventory, footer) if part)


def _scan(segment: str) -> tuple[list[_Line], dict[str, None], str, str]:
    lines: list[_Line] = []
    paths: dict[str, None] = {}
    stamp = first = ""
    current: _Line | None = None
    line_end = -1
    find, rfind = segment.find, segment.rfind
    weights = _WEIGHTS
    for match in _SIGNALS.finditer(segment):
        kind = match.lastgroup or ""
        pos = match.start()
        if kind == "ts":
            stamp = match.group().strip("[]")
            first = first or stamp
        elif kind in ("path", "url"):
            paths[match.group()] = None
        weight = weights[kind]
        if pos >= line_end:
            line_end = find("\n", pos)
            if line_end < 0:
                line_end = len(segment)
            current = _Line(rfind("\n", 0, pos) + 1, line_end, weight, pos, stamp)
            lines.append(current)
        elif current is not None and weight > current.weight:
            current.weight = weight
            current.focus = pos
    return lines, paths, first, stamp


def _choose(segment: str, lines: list[_Line], room: int) -> list[_Line]:
    """The highest-weight distinct lines that fit ``room`` characters, back in source order."""
    seen: set[str] = set()
    chosen: list[_Line] = []
    for line in sorted(lines, key=lambda ln: (-ln.weight, -ln.start)):
        if room <= 0:
            break
        text = _clip(segment, line)
        if text in seen or not text:
            continue
        cost = len(text) + 1 + (len(line.stamp) + 3)
        if cost > room:
            continue
        seen.add(text)
        chosen.append(line)
        room -= cost
    chosen.sort(key=lambda ln: ln.start)
    return chosen


def _render(segment: str, chosen: list[_Line]) -> str:
    out: list[str] = []
    shown = ""
    for line in chosen:
        text = _clip(segment, line)
        if line.stamp and line.stamp != shown and line.weight != _WEIGHTS["ts"] and line.stamp not in text:
            text = f"[{line.stamp}] {text}"
        shown = line.stamp
        out.append(text)
    return "\n".join(out)


def _clip(segment: str, line: _Line) -> str:
    """The line, stripped; a long line keeps a window around its strongest signal."""
    if line.end - line.start <= MAX_LINE:
        return segment[line.start : line.end].strip()
    start = max(line.start, min(line.focus - MAX_LINE // 3, line.end - MAX_LINE))
    text = segment[start : start + MAX_LINE].strip()
    return ("…" if start > line.start else "") + text + ("…" if start + MAX_LINE < line.end else "")


def _inventory(paths: dict[str, None], room: int) -> str:
    if not paths:
        return ""
    kept: list[str] = []
    used = len("Files and URLs: ")
    for path in paths:
        if used + len(path) + 2 > room:
            kept.append(f"(+{len(paths) - len(kept)} more)")
            break
        kept.append(path)
        used += len(path) + 2
    return "Files and URLs: " + ", ".join(kept)


def _span(first: str, last: str) -> str:
    if not first:
        return "no timestamps"
    return first if first == last else f"{first} .. {last}"
